package restrict

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const (
	adminForAll = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: oops}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: system:authenticated}
`
	clusterAdmin = `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: ops, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects:
- {kind: ServiceAccount, name: deployer, namespace: team-a}
`
	viewForTeam = `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: view, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- {kind: Group, name: team-a-devs}
`
	webhook = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: inject}
`
	hostPIDInSystem = `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: propagit-system}
spec:
  template:
    spec:
      hostPID: true
      containers: [{name: a, image: busybox}]
`
	privilegedInKubeSystem = `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: kube-system}
spec:
  containers: [{name: a, image: busybox, securityContext: {privileged: true}}]
`
	privilegedInApp = `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team-a}
spec:
  containers: [{name: a, image: busybox, securityContext: {privileged: true}}]
`
	plainDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-a}
spec:
  template:
    spec:
      containers: [{name: web, image: nginx}]
`
	clusterRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
`
)

func TestDefaultPolicy(t *testing.T) {
	tests := []struct {
		name, manifest, wantRule, wantPath string
	}{
		{"a binding for every authenticated caller is refused", adminForAll, DenyAdminBindings, "subjects[0]"},
		{"a binding of cluster-admin is refused", clusterAdmin, DenyAdminBindings, "roleRef.name"},
		{"a team's view binding is allowed", viewForTeam, "", ""},
		{"a mutating webhook is refused", webhook, DenyAdmissionWebhooks, ""},
		{"a hostPID DaemonSet in propagit-system is refused", hostPIDInSystem, DenyPropagitSystem, "metadata.namespace"},
		{"a privileged pod in kube-system is refused", privilegedInKubeSystem, DenySystemNamespaces, "metadata.namespace"},
		{"a privileged pod in an application namespace is refused too", privilegedInApp, RulePodSecurity, "spec"},
		{"a plain Deployment is allowed", plainDeployment, "", ""},
	}
	var p *Policy // the default
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.Check(obj(t, tt.manifest), "")
			switch {
			case tt.wantRule == "" && r != nil:
				t.Fatalf("refused (%s: %s), want allowed", r.Rule, r.Error())
			case tt.wantRule != "" && r == nil:
				t.Fatalf("allowed, want refused by %s", tt.wantRule)
			case r != nil && (r.Rule != tt.wantRule || r.Path != tt.wantPath):
				t.Fatalf("refused by %s at %q, want %s at %q (%s)", r.Rule, r.Path, tt.wantRule, tt.wantPath, r.Error())
			}
		})
	}
}

func TestAllowListsAndLiftedDenials(t *testing.T) {
	p := &Policy{Namespaces: []string{"team-*"}, ClusterScopedKinds: []string{"ClusterRole.rbac.authorization.k8s.io"},
		Allow: []string{DenyAdminBindings}}
	for manifest, want := range map[string]string{
		adminForAll:     "clusterScopedKinds", // bindings allowed, but not this cluster-scoped kind
		clusterAdmin:    "",                   // lifted
		plainDeployment: "",
		clusterRole:     "",
		privilegedInApp: RulePodSecurity,
		hostPIDInSystem: "namespaces",
		webhook:         "clusterScopedKinds",
	} {
		r := p.Check(obj(t, manifest), "")
		got := ""
		if r != nil {
			got = r.Rule
		}
		if got != want {
			t.Errorf("%s: refused by %q, want %q", obj(t, manifest).GetKind(), got, want)
		}
	}
}

func TestLoadIsStrict(t *testing.T) {
	dir := t.TempDir()
	write := func(content string) string {
		f := filepath.Join(dir, "p.yaml")
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if _, err := Load(write("allow: [admin-bindings]\nnamespaces: [team-*]\n")); err != nil {
		t.Fatalf("valid policy: %v", err)
	}
	for _, bad := range []string{"alow: [admin-bindings]\n", "allow: [everything]\n", "namespaces: ['[']\n",
		"allow: [privileged-system-pods]\n", "podSecurity: strict\n", "podSpecPaths: [{kind: X}]\n", "podSpecPaths: [{kind: X, path: spec, extra: 1}]\n",
		"folders: [{path: t, podSecurity: none}]\n", "systemNamespaces: [kube-system]\n",
		"folders: [{path: ../other, namespaces: [a]}]\n", "folders: [{path: /abs}]\n", "folders: [{path: t, namespaces: ['[']}]\n"} {
		if _, err := Load(write(bad)); err == nil {
			t.Errorf("policy %q loaded; want an error", bad)
		}
	}
}

// TestFoldersNarrowPerTeam pins per-folder rules: a template must pass the
// policy's rules and those of the deepest folder holding its file.
func TestFoldersNarrowPerTeam(t *testing.T) {
	f := filepath.Join(t.TempDir(), "p.yaml")
	policy := "namespaces: [shop-*, pay-*]\nfolders:\n- {path: teams/shop, namespaces: [shop-*], clusterScopedKinds: [Namespace]}\n" +
		"- {path: teams/shop/legacy/, namespaces: [shop-legacy]}\n"
	if err := os.WriteFile(f, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	cm := func(ns string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: " + ns + "}\n"
	}
	for _, tc := range []struct {
		name, manifest, source, rule string
	}{
		{"shop in its folder", cm("shop-web"), "teams/shop/web.yaml", ""},
		{"pay from shop's folder", cm("pay-api"), "teams/shop/web.yaml", "folders"},
		{"pay from its own folder", cm("pay-api"), "teams/pay/api.yaml", ""},
		{"outside every allowed namespace", cm("kube-public"), "teams/pay/api.yaml", "namespaces"},
		{"the deepest folder wins", cm("shop-web"), "teams/shop/legacy/old.yaml", "folders"},
		{"a folder-named file is not in it", cm("pay-api"), "teams/shop.yaml", ""},
		{"cluster-scoped kind limited", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n", "teams/shop/r.yaml", "folders"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := p.Check(obj(t, tc.manifest), tc.source)
			got := ""
			if r != nil {
				got = r.Rule
			}
			if got != tc.rule {
				t.Errorf("rule %q (%v), want %q", got, r, tc.rule)
			}
		})
	}
}
