package restrict

import (
	"testing"
)

const overwrite = "annotations: {work.karmada.io/conflict-resolution: overwrite}"

// TestMoreDefaultDenials: the kinds and targets issue #25 found missing
// from the default denials.
func TestMoreDefaultDenials(t *testing.T) {
	runVerdicts(t, nil, []verdictCase{
		{"an aggregated API", "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1.evil.example.com}\nspec: {service: {name: s, namespace: team-a}}\n", DenyAPIExtensions, ""},
		{"a CRD with a conversion webhook", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ws.example.com}\nspec:\n  conversion:\n    strategy: Webhook\n" +
			"    webhook: {clientConfig: {url: 'https://evil.example.com'}, conversionReviewVersions: [v1]}\n", DenyAPIExtensions, "spec.conversion"},
		{"a CRD without conversion", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ws.example.com}\nspec:\n  conversion: {strategy: None}\n", "", ""},
		{"propagit's namespace", "apiVersion: v1\nkind: Namespace\nmetadata: {name: propagit-system, labels: {x: y}}\n", DenyPropagitSystem, "metadata.name"},
		{"a ConfigMap in propagit's namespace", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: propagit-system}\n", DenyPropagitSystem, "metadata.namespace"},
		{"a pod running as propagit", pod("propagit-system", "  serviceAccountName: propagit\n"+plainContainers), DenyPropagitSystem, "metadata.namespace"},
		{"a Secret in the hub's credentials namespace", "apiVersion: v1\nkind: Secret\nmetadata: {name: member1-credentials, namespace: karmada-cluster}\n", DenyPropagitSystem, "metadata.namespace"},
		{"propagit's Git token by name elsewhere", "apiVersion: v1\nkind: Secret\nmetadata: {name: propagit-git, namespace: team-a}\n", DenyPropagitSystem, "metadata.name"},
		{"propagit's ServiceAccount by name elsewhere", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: propagit-agent, namespace: team-a}\n", DenyPropagitSystem, "metadata.name"},
		{"propagit's ClusterRole rewritten", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: propagit-member}\nrules: []\n", DenyPropagitSystem, "metadata.name"},
		{"adopting a Namespace", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, " + overwrite + "}\n", DenyAdoption, "metadata.annotations"},
		{"adopting a CRD", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ws.example.com, " + overwrite + "}\n", DenyAdoption, "metadata.annotations"},
		{"adopting a cluster-scoped object", "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast, " + overwrite + "}\nprovisioner: x\n", DenyAdoption, "metadata.annotations"},
		{"adopting a ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: team-a, " + overwrite + "}\n", "", ""},
	})
	lifted := &Policy{Allow: []string{DenyAdoption, DenyPropagitSystem, DenyAPIExtensions}}
	runVerdicts(t, lifted, []verdictCase{
		{"adoption allowed", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, " + overwrite + "}\n", "", ""},
		{"propagit's namespace allowed", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: propagit-system}\n", "", ""},
		{"APIService allowed", "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1.x.example.com}\n", "", ""},
	})
}

// TestNamespacesAndScope: a Namespace object is a namespace (its name is
// checked against the namespace lists), and a kind propagit does not know
// to be namespaced is judged as cluster-scoped even when it carries a
// namespace.
func TestNamespacesAndScope(t *testing.T) {
	p := &Policy{Namespaces: []string{"team-*"}, ClusterScopedKinds: []string{"Namespace"}}
	widget := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: team-a}\n"
	runVerdicts(t, p, []verdictCase{
		{"a Namespace outside the list", "apiVersion: v1\nkind: Namespace\nmetadata: {name: payments}\n", "namespaces", "metadata.name"},
		{"a Namespace in the list", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n", "", ""},
		{"an unknown kind with a namespace", widget, "clusterScopedKinds", "kind"},
		{"a cluster-scoped built-in with a namespace", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r, namespace: team-a}\nrules: []\n", "clusterScopedKinds", "kind"},
		{"a known namespaced kind", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: team-a}\nspec: {template: {spec: {containers: [{name: a, image: b}]}}}\n", "", ""},
	})
	declared := &Policy{Namespaces: []string{"team-*"}, ClusterScopedKinds: []string{"Namespace"}, NamespacedKinds: []string{"Widget.example.com"}}
	runVerdicts(t, declared, []verdictCase{{"a declared namespaced kind", widget, "", ""}})

	folder := &Policy{Folders: []Folder{{Path: "teams/shop", Namespaces: []string{"shop"}, ClusterScopedKinds: []string{"Namespace"}}}}
	if r := folder.Check(obj(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: propagit-ops}\n"), "teams/shop/ns.yaml"); r == nil || r.Rule != "folders" {
		t.Errorf("a folder's Namespace outside its namespaces: %v, want refused by folders", r)
	}
}

// TestSystemNamespaces: a pod in kube-system may run as any of the control
// plane's ServiceAccounts (clusterrole-aggregation-controller holds
// escalate), so pod specs, token Secrets and RBAC there are refused.
func TestSystemNamespaces(t *testing.T) {
	runVerdicts(t, nil, []verdictCase{
		{"a Deployment running as a controller's account", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: kube-system}\nspec:\n  template:\n    spec:\n" +
			"      serviceAccountName: clusterrole-aggregation-controller\n      containers: [{name: a, image: b}]\n", DenySystemNamespaces, "metadata.namespace"},
		{"a legacy token Secret", "apiVersion: v1\nkind: Secret\nmetadata: {name: t, namespace: kube-system, annotations: {kubernetes.io/service-account.name: generic-garbage-collector}}\ntype: kubernetes.io/service-account-token\n",
			DenySystemNamespaces, "metadata.namespace"},
		{"a Role reading kube-system's Secrets", role("Role", "kube-system", "", "- {apiGroups: [''], resources: [secrets], verbs: [get]}\n"), DenySystemNamespaces, "metadata.namespace"},
		{"a ConfigMap in kube-public", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: kube-public}\n", "", ""},
	})
	lifted := &Policy{Allow: []string{DenySystemNamespaces}}
	if r := lifted.Check(obj(t, pod("kube-system", plainContainers)), ""); r != nil {
		t.Errorf("a plain pod in kube-system with %s allowed: %v", DenySystemNamespaces, r)
	}
}
