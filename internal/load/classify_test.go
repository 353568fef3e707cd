package load

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// placeOf says where a single document lands.
func placeOf(s *Set) string {
	var out []string
	add := func(what string, n int) {
		for range n {
			out = append(out, what)
		}
	}
	add("template", len(s.Templates))
	add("propagation", len(s.Propagations))
	add("override", len(s.Overrides))
	add("cluster", len(s.Clusters))
	for _, f := range s.Findings {
		out = append(out, "finding: "+f.Message)
	}
	return strings.Join(out, ", ")
}

func TestClassification(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"ordinary object is a template", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "template"},
		{"custom resource outside Karmada is a template", "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata: {name: s}\n", "template"},
		{"group ending in karmada.io without a dot is a template", "apiVersion: notkarmada.io/v1\nkind: Thing\nmetadata: {name: t}\n", "template"},
		{"PropagationPolicy", pp("p", ""), "propagation"},
		{"ClusterPropagationPolicy", strings.Replace(pp("p", ""), "kind: PropagationPolicy", "kind: ClusterPropagationPolicy", 1), "propagation"},
		{"OverridePolicy", "apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: o}\n", "override"},
		{"ClusterOverridePolicy", "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterOverridePolicy\nmetadata: {name: o}\n", "override"},
		{"Cluster", "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: member1}\nspec: {syncMode: Push}\n", "cluster"},
		{
			"ResourceBinding is unsupported",
			"apiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding\nmetadata: {name: rb}\n",
			`finding: unsupported Karmada kind ResourceBinding.work.karmada.io/rb: propagit does not implement it; it is not propagated`,
		},
		{
			"FederatedHPA is unsupported",
			"apiVersion: autoscaling.karmada.io/v1alpha1\nkind: FederatedHPA\nmetadata: {name: h}\n",
			`finding: unsupported Karmada kind FederatedHPA.autoscaling.karmada.io/h: propagit does not implement it; it is not propagated`,
		},
		{
			"policy kind in the bare karmada.io group is unsupported",
			"apiVersion: karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: o}\n",
			`finding: unsupported Karmada kind OverridePolicy.karmada.io/o: propagit does not implement it; it is not propagated`,
		},
		{
			"policy kind at another version is unsupported",
			"apiVersion: policy.karmada.io/v1beta1\nkind: PropagationPolicy\nmetadata: {name: p}\n",
			`finding: unsupported Karmada kind PropagationPolicy.policy.karmada.io/p at version v1beta1: propagit reads policy.karmada.io/v1alpha1; it is not propagated`,
		},
		{
			"List items are classified one by one",
			"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- " +
				strings.ReplaceAll(pp("p", ""), "\n", "\n  "),
			"template, propagation",
		},
		{
			"object without a name is left out with a finding",
			"apiVersion: pipecd.dev/v1beta1\nkind: Piped\nspec: {}\n",
			"finding: metadata.name: required: an object without a name cannot be applied; Piped.pipecd.dev is not loaded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := mustLoad(t, map[string]string{"a.yaml": tt.doc})
			if got := placeOf(set); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// pp is a minimal valid PropagationPolicy; ns may be empty.
func pp(name, ns string) string {
	meta := "metadata:\n  name: " + name + "\n"
	if ns != "" {
		meta += "  namespace: " + ns + "\n"
	}
	return "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\n" + meta +
		"spec:\n  resourceSelectors:\n  - apiVersion: apps/v1\n    kind: Deployment\n"
}

func TestNamespaces(t *testing.T) {
	crd := func(kind, scope string) string {
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\n" +
			"spec:\n  group: example.com\n  scope: " + scope + "\n  names: {kind: " + kind + ", plural: x}\n"
	}
	set := mustLoad(t, map[string]string{
		"a-deployment.yaml": deployment,
		"b-in-ns.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\n",
		"c-clusterrole.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n" +
			"metadata: {name: reader, namespace: ignored}\n",
		"d-namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
		"e-crds.yaml": crd("Widget", "Cluster") + "---\n" +
			strings.Replace(crd("Gadget", "Namespaced"), "name: x", "name: y", 1),
		"f-widget.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: dropped}\n",
		"g-gadget.yaml": "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n",
		"h-pp.yaml":     pp("p", ""),
		"i-cpp.yaml":    strings.Replace(pp("cp", "dropped"), "kind: PropagationPolicy", "kind: ClusterPropagationPolicy", 1),
		"j-cluster.yaml": "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\n" +
			"metadata: {name: m1, namespace: dropped}\nspec: {syncMode: Pull}\n",
	})
	want := []string{"default/web", "shop/c", "reader", "shop", "x", "y", "w", "default/g"}
	if diff := cmp.Diff(want, templateNames(set)); diff != "" {
		t.Errorf("template namespaces (-want +got):\n%s", diff)
	}
	var policies []string
	for _, p := range set.Propagations {
		policies = append(policies, p.Policy.Namespace+"/"+p.Policy.Name)
	}
	if diff := cmp.Diff([]string{"default/p", "/cp"}, policies); diff != "" {
		t.Errorf("policy namespaces (-want +got):\n%s", diff)
	}
	if ns := set.Clusters[0].Cluster.Namespace; ns != "" {
		t.Errorf("cluster namespace: got %q, want none", ns)
	}
}

func TestDuplicates(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name:  "same object in two files",
			files: map[string]string{"a.yaml": deployment, "b/c.yaml": "# comment\n" + deployment},
			want:  []string{`b/c.yaml:2: Deployment.apps/default/web is defined twice: first at a.yaml:1`},
		},
		{
			name: "same object at two API versions, namespace defaulted",
			files: map[string]string{
				"a.yaml": deployment,
				"b.yaml": strings.Replace(strings.Replace(deployment, "apps/v1", "apps/v1beta2", 1), "name: web\n", "name: web\n  namespace: default\n", 1),
			},
			want: []string{`b.yaml:1: Deployment.apps/default/web is defined twice: first at a.yaml:1`},
		},
		{
			name:  "two policies in one file",
			files: map[string]string{"p.yaml": pp("p", "") + "---\n" + pp("p", "default")},
			want:  []string{`p.yaml:10: PropagationPolicy.policy.karmada.io/default/p is defined twice: first at p.yaml:1`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, problemsOf(t, tt.files)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSameNameDifferentIdentityIsNoDuplicate(t *testing.T) {
	set := mustLoad(t, map[string]string{
		"a.yaml": deployment,
		"b.yaml": strings.Replace(deployment, "name: web\n", "name: web\n  namespace: other\n", 1),
		"c.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n",
		"d.yaml": pp("web", "") + "---\n" + strings.Replace(pp("web", ""), "kind: PropagationPolicy", "kind: ClusterPropagationPolicy", 1),
	})
	if len(set.Templates) != 3 || len(set.Propagations) != 2 {
		t.Errorf("got %d templates and %d policies, want 3 and 2", len(set.Templates), len(set.Propagations))
	}
}

func TestTemplateUnknownMetadataFieldsAreDropped(t *testing.T) {
	set := mustLoad(t, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  nnamespace: x\n" +
		"  ownerReferences:\n  - {apiVersion: v1, kind: X, name: y, uid: u, extra: 1}\n"})
	wantFinds := []string{"a.yaml:5: metadata.nnamespace: unknown field (did you mean \"namespace\"?); ignored", "a.yaml:7: metadata.ownerReferences[0].extra: unknown field; ignored"}
	var got []string
	for _, f := range set.Findings {
		got = append(got, f.String())
	}
	if diff := cmp.Diff(wantFinds, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	meta := set.Templates[0].Object.Object["metadata"].(map[string]any)
	want := map[string]any{"name": "c", "namespace": "default", "ownerReferences": []any{
		map[string]any{"apiVersion": "v1", "kind": "X", "name": "y", "uid": "u"},
	}}
	if diff := cmp.Diff(want, meta); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
}

func TestEndMarkerLines(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []int
	}{
		{"a: 1\n", nil},
		{"a: 1\n...\nb: 2\n", []int{2}},
		{"a: 1\r\n... \r\n....\nb: ...\n...", []int{2, 5}},
		{"...\t\n\n...\n", []int{1, 3}},
	} {
		if got := endMarkerLines([]byte(tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("endMarkerLines(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
