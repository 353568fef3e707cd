package join

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/restrict"
)

// objectVerbs is the one rule propagit's appliers need that the default
// restriction policy refuses a commit: the object verbs on every resource,
// without which propagit could not apply kinds it has never heard of. RBAC
// cannot subtract, so "*" also covers serviceaccounts/token and pods/exec;
// that is why a commit may never bind these roles (admin-bindings refuses
// roleRef propagit*) and why README calls a cluster-wide join cluster-admin.
var objectVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// TestDeployAndJoinGrantNothingTheDefaultPolicyRefuses is finding 5 of
// issue #25: deploy/agent/cluster-wide still granted bind and escalate.
// Every RBAC object under deploy/ and every one join creates is judged by
// the default restriction policy, less what propagit obviously needs for
// itself: its own names and namespace (propagit-system), bindings of its
// own roles to its own ServiceAccounts, the object-verbs rule above, and
// rules limited by resourceNames to its own objects (a token for itself,
// its hub Secret) in roles bound only inside propagit-system. What remains
// must pass; the opt-in bind/escalate variants must not.
func TestDeployAndJoinGrantNothingTheDefaultPolicyRefuses(t *testing.T) {
	sets := map[string][]*unstructured.Unstructured{"deploy/": deployRBAC(t)}
	for name, o := range map[string]Options{
		"join push":       {Mode: ModePush},
		"join namespaced": {Mode: ModePush, Namespaces: []string{"team-a", "team-b"}},
		"join pull hub":   {Mode: ModePull, Hub: true},
	} {
		sets[name] = joinRBAC(t, o)
	}
	for name, objs := range sets {
		t.Run(name, func(t *testing.T) {
			if len(objs) < 3 {
				t.Fatalf("found only %d RBAC objects", len(objs))
			}
			for _, o := range objs {
				if r := judgeOwn(o, objs); r != nil {
					t.Errorf("%s %s/%s: %s: %s", o.GetKind(), o.GetNamespace(), o.GetName(), r.Rule, r.Error())
				}
			}
		})
	}
	optIn := map[string][]*unstructured.Unstructured{
		"join with bind":                 joinRBAC(t, Options{Mode: ModePush, GrantBind: true}),
		"deploy/agent/cluster-wide-bind": build(t, "../../deploy/agent/cluster-wide-bind"),
	}
	for name, objs := range optIn {
		refused := false
		for _, o := range objs {
			if r := judgeOwn(o, objs); r != nil && r.Rule == restrict.DenyRBACEscalation {
				refused = true
			}
		}
		if !refused {
			t.Errorf("%s: no role refused for %s, want its bind/escalate refused", name, restrict.DenyRBACEscalation)
		}
	}
}

// judgeOwn checks o as the default policy would a commit, with the
// exemptions TestDeployAndJoinGrantNothingTheDefaultPolicyRefuses names.
func judgeOwn(o *unstructured.Unstructured, all []*unstructured.Unstructured) *restrict.Refusal {
	own := &restrict.Policy{Allow: []string{restrict.DenyPropagitSystem}}
	switch o.GetKind() {
	case "RoleBinding", "ClusterRoleBinding":
		if ref, _, _ := unstructured.NestedString(o.Object, "roleRef", "name"); !strings.HasPrefix(ref, "propagit") {
			return &restrict.Refusal{Rule: "own", Path: "roleRef.name", Message: "binds a role that is not propagit's own: " + ref}
		}
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		for _, s := range subjects {
			m := s.(map[string]any)
			if m["kind"] != "ServiceAccount" || m["namespace"] != Namespace || !strings.HasPrefix(m["name"].(string), "propagit") {
				return &restrict.Refusal{Rule: "own", Path: "subjects", Message: "grants to an identity that is not propagit's own"}
			}
		}
		own.Allow = append(own.Allow, restrict.DenyAdminBindings)
	case "Role", "ClusterRole":
		o = o.DeepCopy()
		rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
		rules = slices.DeleteFunc(rules, func(r any) bool { return exempt(r.(map[string]any), o, all) })
		_ = unstructured.SetNestedSlice(o.Object, rules, "rules")
	}
	return own.Check(o, "")
}

// exempt reports whether rule of role is one propagit obviously needs.
func exempt(rule map[string]any, role *unstructured.Unstructured, all []*unstructured.Unstructured) bool {
	list := func(k string) []string {
		var out []string
		for _, v := range rule[k].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	if rule["resources"] != nil && slices.Equal(list("apiGroups"), []string{"*"}) && slices.Equal(list("resources"), []string{"*"}) {
		return slices.Equal(list("verbs"), objectVerbs)
	}
	if rule["resourceNames"] == nil {
		return false
	}
	for _, n := range list("resourceNames") {
		if n != ServiceAccount && !strings.HasPrefix(n, "propagit-") {
			return false
		}
	}
	bound := false
	for _, b := range all {
		if ref, _, _ := unstructured.NestedString(b.Object, "roleRef", "name"); ref == role.GetName() && strings.HasSuffix(b.GetKind(), "Binding") {
			if b.GetKind() != "RoleBinding" || b.GetNamespace() != Namespace {
				return false
			}
			bound = true
		}
	}
	return bound
}

// deployRBAC reads every RBAC object of every YAML file under deploy/.
func deployRBAC(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	err := filepath.WalkDir("../../deploy", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return err
			}
			if u.GetAPIVersion() == "rbac.authorization.k8s.io/v1" {
				out = append(out, u)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// build runs kustomize on dir and keeps the RBAC objects.
func build(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		if u := (&unstructured.Unstructured{Object: m}); u.GetAPIVersion() == "rbac.authorization.k8s.io/v1" {
			out = append(out, u)
		}
	}
	return out
}

// joinRBAC is what Join applies for o, as unstructured objects.
func joinRBAC(t *testing.T, o Options) []*unstructured.Unstructured {
	t.Helper()
	d := desiredRBAC(o)
	var acs []any
	for _, x := range d.clusterRoles {
		acs = append(acs, x)
	}
	for _, x := range d.clusterRoleBindings {
		acs = append(acs, x)
	}
	for _, x := range d.roleBindings {
		acs = append(acs, x)
	}
	var out []*unstructured.Unstructured
	for _, ac := range acs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ac)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

// TestRestrictKnowsPropagitsNames: restrict cannot import join, so it
// keeps its own copy of the names it protects; this pins them together.
func TestRestrictKnowsPropagitsNames(t *testing.T) {
	for _, ns := range []string{Namespace, CredentialsNamespace} {
		if !slices.Contains(restrict.PropagitNamespaces, ns) {
			t.Errorf("restrict.PropagitNamespaces %v lacks %s", restrict.PropagitNamespaces, ns)
		}
	}
	for _, secret := range []string{AgeKeySecret, HubSecretName, ServiceAccount} {
		for _, kind := range []string{"Secret", "ServiceAccount"} {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("v1")
			u.SetKind(kind)
			u.SetName(secret)
			u.SetNamespace("team-a")
			if r := (*restrict.Policy)(nil).Check(u, ""); r == nil || r.Rule != restrict.DenyPropagitSystem {
				t.Errorf("%s %s in another namespace: %v, want refused by %s", kind, secret, r, restrict.DenyPropagitSystem)
			}
		}
	}
}
