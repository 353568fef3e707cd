package render_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/render"
)

// cpp selects the Namespaces named in names and places them on clusters.
func cpp(name, clusterNames string, names ...string) string {
	s := "---\napiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {name: " + name + "}\nspec:\n  resourceSelectors:\n"
	for _, n := range names {
		s += "  - {apiVersion: v1, kind: Namespace, name: " + n + "}\n"
	}
	return s + "  placement:\n    clusterAffinity: {clusterNames: [" + clusterNames + "]}\n"
}

const skipLabelled = `apiVersion: v1
kind: Namespace
metadata: {name: team-b, labels: {namespace.karmada.io/skip-auto-propagation: "true"}}
`

const plainNamespace = `apiVersion: v1
kind: Namespace
metadata: {name: team-a}
`

// nsOutcome is where one Namespace goes and what explain says of it.
type nsOutcome struct {
	Clusters []string
	Policy   string // explain's policy, "" for none
	Skipped  bool   // never propagated, whatever the policies
}

func namespaceOutcome(t *testing.T, res *render.Result, key string) nsOutcome {
	t.Helper()
	for _, b := range res.Bindings {
		if b.Key.String() != key {
			continue
		}
		var got nsOutcome
		for _, tg := range b.Targets {
			got.Clusters = append(got.Clusters, tg.Cluster)
		}
		got.Policy = render.Explain(b, res.Clusters).Policy
		got.Skipped = b.Skipped != ""
		return got
	}
	t.Fatalf("no binding for %s", key)
	return nsOutcome{}
}

// TestNamespacePlacement follows karmada-semantics.md §3.2: a
// ClusterPropagationPolicy selects Namespaces like any cluster-scoped
// template (§2.3); the skip label and --namespace-auto-propagation=false
// stop only the namespace controller; the reserved and skipped namespaces
// (§3.1) stay out whatever selects them.
func TestNamespacePlacement(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ns     string
		key    string
		policy string
		noAuto bool
		want   nsOutcome
	}{
		{name: "a CPP places a Namespace labelled to skip auto-propagation on its clusters only",
			ns: skipLabelled, key: "Namespace.core/team-b", policy: cpp("only-m1", "m1", "team-b"),
			want: nsOutcome{Clusters: []string{"m1"}, Policy: "ClusterPropagationPolicy.policy.karmada.io/only-m1"}},
		{name: "a Namespace labelled to skip auto-propagation that no CPP selects goes nowhere, and is not reported as skipped",
			ns: skipLabelled, key: "Namespace.core/team-b", policy: cpp("other", "m1", "team-z"),
			want: nsOutcome{}},
		{name: "a CPP selecting an unlabelled Namespace names the policy and auto-propagation still reaches every cluster",
			ns: plainNamespace, key: "Namespace.core/team-a", policy: cpp("only-m1", "m1", "team-a"),
			want: nsOutcome{Clusters: []string{"m1", "m2", "m3"}, Policy: "ClusterPropagationPolicy.policy.karmada.io/only-m1"}},
		{name: "with auto-propagation off a Namespace no CPP selects goes nowhere",
			ns: plainNamespace, key: "Namespace.core/team-a", noAuto: true, policy: cpp("other", "m1", "team-z"),
			want: nsOutcome{}},
		{name: "with auto-propagation off a CPP alone decides a Namespace's clusters",
			ns: plainNamespace, key: "Namespace.core/team-a", noAuto: true, policy: cpp("two", "m2,m3", "team-a"),
			want: nsOutcome{Clusters: []string{"m2", "m3"}, Policy: "ClusterPropagationPolicy.policy.karmada.io/two"}},
		{name: "a CPP places the default Namespace, which is never auto-propagated",
			ns: "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n", key: "Namespace.core/default", policy: cpp("def", "m3", "default"),
			want: nsOutcome{Clusters: []string{"m3"}, Policy: "ClusterPropagationPolicy.policy.karmada.io/def"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := render.DefaultOptions()
			opts.NamespaceAutoPropagation = !tc.noAuto
			set := loadFiles(t, map[string]string{"clusters.yaml": clusters("m1", "m2", "m3"), "ns.yaml": tc.ns, "cpp.yaml": tc.policy}, nil)
			res := render.Render(render.Input{Set: set, Options: opts})
			if diff := cmp.Diff(tc.want, namespaceOutcome(t, res, tc.key)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestNamespaceReasons checks what explain says of a Namespace placed by
// neither mechanism (karmada-semantics.md §3.2): the reason names what
// stopped auto-propagation, never "no policy" alone.
func TestNamespaceReasons(t *testing.T) {
	for _, tc := range []struct {
		name, ns, want string
		noAuto         bool
	}{
		{name: "the skip label is named", ns: skipLabelled,
			want: "no ClusterPropagationPolicy selects it and it is labelled namespace.karmada.io/skip-auto-propagation=true, which stops auto-propagation"},
		{name: "auto-propagation turned off is named", ns: plainNamespace, noAuto: true,
			want: "no ClusterPropagationPolicy selects it and namespace auto-propagation is off (--namespace-auto-propagation=false)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := render.DefaultOptions()
			opts.NamespaceAutoPropagation = !tc.noAuto
			res := render.Render(render.Input{Set: loadFiles(t, map[string]string{"clusters.yaml": clusters("m1"), "ns.yaml": tc.ns}, nil), Options: opts})
			if len(res.Bindings) != 1 {
				t.Fatalf("got %d bindings", len(res.Bindings))
			}
			if got := render.Explain(res.Bindings[0], res.Clusters).PolicyReason; got != tc.want {
				t.Errorf("reason = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNamespaceLint checks what lint says of Namespaces
// (karmada-semantics.md §3.2): a policy that selects a Namespace which
// auto-propagation also sends everywhere does not decide its clusters, and
// lint says so; a labelled Namespace, placed by its policy or by none, is
// what the user asked for and draws no finding.
func TestNamespaceLint(t *testing.T) {
	for _, tc := range []struct {
		name, ns, policy string
		want             []string
	}{
		{name: "a CPP selecting an unlabelled Namespace warns that auto-propagation sends it everywhere anyway",
			ns: plainNamespace, policy: cpp("only-m1", "m1", "team-a"),
			want: []string{`warning: Namespace/team-a is placed by ClusterPropagationPolicy.policy.karmada.io/only-m1, but namespace auto-propagation also sends it to every cluster; label it namespace.karmada.io/skip-auto-propagation: "true" to place it by the policy only`}},
		{name: "a labelled Namespace placed by a CPP draws no finding",
			ns: skipLabelled, policy: cpp("only-m1", "m1", "team-b")},
		{name: "a labelled Namespace no CPP selects draws no finding",
			ns: skipLabelled, policy: cpp("other", "m1", "team-z")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := loadFiles(t, map[string]string{"clusters.yaml": clusters("m1", "m2"), "ns.yaml": tc.ns, "cpp.yaml": tc.policy}, nil)
			res := render.Render(render.Input{Set: set, Options: render.DefaultOptions()})
			var got []string
			for _, f := range render.Lint(set, res) {
				if f.Source.Path == "ns.yaml" {
					got = append(got, string(f.Severity)+": "+f.Message)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings on ns.yaml (-want +got):\n%s", diff)
			}
		})
	}
}
