package restrict

import (
	"strings"
	"testing"
)

// verdict runs p.Check on manifest and compares the refusing rule and the
// start of its field path ("" rule: allowed).
type verdictCase struct {
	name, manifest, wantRule, wantPath string
}

func runVerdicts(t *testing.T, p *Policy, cases []verdictCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := p.Check(obj(t, tc.manifest), "")
			switch {
			case tc.wantRule == "" && r != nil:
				t.Fatalf("refused (%s: %s), want allowed", r.Rule, r.Error())
			case tc.wantRule != "" && r == nil:
				t.Fatalf("allowed, want refused by %s at %s", tc.wantRule, tc.wantPath)
			case r != nil && (r.Rule != tc.wantRule || !strings.HasPrefix(r.Path, tc.wantPath)):
				t.Fatalf("refused by %s at %q, want %s at %q (%s)", r.Rule, r.Path, tc.wantRule, tc.wantPath, r.Error())
			}
		})
	}
}

func binding(kind, ns, roleKind, role, subjects string) string {
	meta := "metadata: {name: b}\n"
	if ns != "" {
		meta = "metadata: {name: b, namespace: " + ns + "}\n"
	}
	return "apiVersion: rbac.authorization.k8s.io/v1\nkind: " + kind + "\n" + meta +
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: " + roleKind + ", name: '" + role + "'}\nsubjects:\n" + subjects
}

func role(kind, ns, extra, rules string) string {
	meta := "metadata: {name: r" + extra + "}\n"
	if ns != "" {
		meta = "metadata: {name: r, namespace: " + ns + extra + "}\n"
	}
	return "apiVersion: rbac.authorization.k8s.io/v1\nkind: " + kind + "\n" + meta + "rules:\n" + rules
}

const mallory = "- {apiGroup: rbac.authorization.k8s.io, kind: User, name: mallory}\n"

// TestBindingsJudgedAsEscalation is finding 4 of issue #25: binding
// propagit's own member ClusterRole (which can mint a token for any
// ServiceAccount) to any identity passed the default policy, which only
// looked for cluster-admin. Every built-in powerful role, every propagit
// role and every built-in or propagit identity is refused.
func TestBindingsJudgedAsEscalation(t *testing.T) {
	runVerdicts(t, nil, []verdictCase{
		{"propagit's member role bound to a user", binding("ClusterRoleBinding", "", "ClusterRole", "propagit-member", mallory), DenyAdminBindings, "roleRef.name"},
		{"propagit's namespaced role bound in a namespace", binding("RoleBinding", "team-a", "ClusterRole", "propagit-member-namespaced", mallory), DenyAdminBindings, "roleRef.name"},
		{"admin in a namespace", binding("RoleBinding", "team-a", "ClusterRole", "admin", mallory), DenyAdminBindings, "roleRef.name"},
		{"edit cluster-wide", binding("ClusterRoleBinding", "", "ClusterRole", "edit", mallory), DenyAdminBindings, "roleRef.name"},
		{"a system role", binding("ClusterRoleBinding", "", "ClusterRole", "system:controller:clusterrole-aggregation-controller", mallory), DenyAdminBindings, "roleRef.name"},
		{"to propagit's ServiceAccount", binding("RoleBinding", "team-a", "Role", "mine",
			"- {kind: ServiceAccount, name: propagit, namespace: propagit-system}\n"), DenyAdminBindings, "subjects[0]"},
		{"to propagit's ServiceAccount as a user", binding("ClusterRoleBinding", "", "ClusterRole", "view",
			"- {apiGroup: rbac.authorization.k8s.io, kind: User, name: 'system:serviceaccount:propagit-system:propagit-agent'}\n"), DenyAdminBindings, "subjects[0]"},
		{"to every ServiceAccount of kube-system", binding("ClusterRoleBinding", "", "ClusterRole", "view",
			"- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: 'system:serviceaccounts:kube-system'}\n"), DenyAdminBindings, "subjects[0]"},
		{"to the nodes", binding("ClusterRoleBinding", "", "ClusterRole", "view",
			mallory+"- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: 'system:nodes'}\n"), DenyAdminBindings, "subjects[1]"},
		{"a team's view binding", binding("RoleBinding", "team-a", "ClusterRole", "view", mallory), "", ""},
		{"a team's own role", binding("RoleBinding", "team-a", "Role", "deployer", "- {kind: ServiceAccount, name: ci}\n"), "", ""},
	})
}

// TestRolesJudgedAsEscalation is finding 5 of issue #25: a ClusterRole
// with * on * under any name, bound to anyone, passed the default policy.
// A role that grants what lets its holder grant or take more is refused.
func TestRolesJudgedAsEscalation(t *testing.T) {
	runVerdicts(t, nil, []verdictCase{
		{"* on * under another name", role("ClusterRole", "", "", "- {apiGroups: ['*'], resources: ['*'], verbs: ['*']}\n"), DenyRBACEscalation, "rules[0]"},
		{"every verb on configmaps", role("Role", "team-a", "", "- {apiGroups: [''], resources: [configmaps], verbs: ['*']}\n"), DenyRBACEscalation, "rules[0].verbs"},
		{"object verbs on every resource", role("ClusterRole", "", "", "- {apiGroups: [''], resources: ['*'], verbs: [get]}\n"), DenyRBACEscalation, "rules[0].resources"},
		{"every subresource", role("Role", "team-a", "", "- {apiGroups: [''], resources: ['pods/*'], verbs: [get]}\n"), DenyRBACEscalation, "rules[0].resources"},
		{"escalate", role("Role", "team-a", "", "- {apiGroups: [rbac.authorization.k8s.io], resources: [roles], verbs: [escalate]}\n"), DenyRBACEscalation, "rules[0]"},
		{"bind on any group", role("ClusterRole", "", "", "- {apiGroups: ['*'], resources: [clusterroles], verbs: [bind]}\n"), DenyRBACEscalation, "rules[0]"},
		{"impersonate", role("ClusterRole", "", "", "- {apiGroups: [''], resources: [serviceaccounts], verbs: [impersonate]}\n"), DenyRBACEscalation, "rules[0]"},
		{"minting tokens in a namespace", role("Role", "team-a", "", "- {apiGroups: [''], resources: [serviceaccounts/token], verbs: [create]}\n"), DenyRBACEscalation, "rules[0]"},
		{"approving certificates", role("ClusterRole", "", "", "- {apiGroups: [certificates.k8s.io], resources: [signers], verbs: [approve]}\n"), DenyRBACEscalation, "rules[0]"},
		{"secrets cluster-wide", role("ClusterRole", "", "", "- {apiGroups: [''], resources: [configmaps, secrets], verbs: [list]}\n"), DenyRBACEscalation, "rules[0]"},
		{"secrets of any group cluster-wide", role("ClusterRole", "", "", "- {apiGroups: ['*'], resources: [secrets], verbs: [get]}\n"), DenyRBACEscalation, "rules[0]"},
		{"the kubelet's proxy", role("ClusterRole", "", "", "- {apiGroups: [''], resources: [nodes/proxy], verbs: [get]}\n"), DenyRBACEscalation, "rules[0]"},
		{"exec cluster-wide", role("ClusterRole", "", "", "- {apiGroups: [''], resources: [pods/exec], verbs: [create]}\n"), DenyRBACEscalation, "rules[0]"},
		{"aggregating", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\naggregationRule:\n  clusterRoleSelectors: [{matchLabels: {x: y}}]\n", DenyRBACEscalation, "aggregationRule"},
		{"aggregated into edit", role("ClusterRole", "", ", labels: {rbac.authorization.k8s.io/aggregate-to-edit: 'true'}",
			"- {apiGroups: [''], resources: [configmaps], verbs: [get]}\n"), DenyRBACEscalation, "metadata.labels"},
		{"secrets in a team's namespace", role("Role", "team-a", "", "- {apiGroups: [''], resources: [secrets, pods/exec], verbs: [get, create]}\n"), "", ""},
		{"a reader ClusterRole", role("ClusterRole", "", "", "- {apiGroups: ['', apps], resources: [configmaps, deployments], verbs: [get, list, watch]}\n"), "", ""},
	})
	allowed := &Policy{Allow: []string{DenyRBACEscalation}}
	if r := allowed.Check(obj(t, role("ClusterRole", "", "", "- {apiGroups: ['*'], resources: ['*'], verbs: ['*']}\n")), ""); r != nil {
		t.Errorf("a policy that allows %s refused: %v", DenyRBACEscalation, r)
	}
}
