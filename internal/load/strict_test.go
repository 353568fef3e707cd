package load

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ppWith is a PropagationPolicy whose spec continues with extra (indented
// under spec).
func ppWith(extra string) string {
	return "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: p\nspec:\n" +
		"  resourceSelectors:\n  - apiVersion: apps/v1\n    kind: Deployment\n" + extra
}

var strictCases = []struct {
	name string
	doc  string
	want []string
}{
	{
		name: "unknown field names the path and line",
		doc:  ppWith("  placement:\n    clusterAffinity:\n      propagatePriority: 1\n"),
		want: []string{"a.yaml:11: spec.placement.clusterAffinity.propagatePriority: unknown field"},
	},
	{
		name: "field names are case-sensitive",
		doc:  ppWith("  placement:\n    clusterTolerations:\n    - Effect: NoSchedule\n      operator: Exists\n"),
		want: []string{`a.yaml:11: spec.placement.clusterTolerations[0].Effect: unknown field (did you mean "effect"?)`},
	},
	{
		name: "float where an integer is expected",
		doc: ppWith("  placement:\n    replicaScheduling:\n      weightPreference:\n        staticWeightList:\n" +
			"        - targetCluster: {clusterNames: [a]}\n          weight: 1.5\n"),
		want: []string{"a.yaml:14: spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: expected an integer, got 1.5"},
	},
	{
		name: "string where an integer is expected",
		doc:  ppWith("  priority: high\n"),
		want: []string{`a.yaml:9: spec.priority: expected an integer, got "high"`},
	},
	{
		name: "integer beyond int32",
		doc:  ppWith("  priority: 3000000000\n"),
		want: []string{"a.yaml:9: spec.priority: 3000000000 is out of range for a 32-bit integer"},
	},
	{
		name: "number where a string is expected",
		doc:  ppWith("  schedulerName: 42\n"),
		want: []string{"a.yaml:9: spec.schedulerName: expected a string, got 42"},
	},
	{
		name: "string where a boolean is expected (YAML 1.2: yes is a string)",
		doc:  ppWith("  propagateDeps: yes\n"),
		want: []string{`a.yaml:9: spec.propagateDeps: expected a boolean, got "yes"`},
	},
	{
		name: "scalar where a list is expected",
		doc:  ppWith("  placement:\n    clusterAffinity:\n      clusterNames: member1\n"),
		want: []string{`a.yaml:11: spec.placement.clusterAffinity.clusterNames: expected a list, got "member1"`},
	},
	{
		name: "label value that is not a string",
		doc:  ppWith("  placement:\n    clusterAffinity:\n      labelSelector:\n        matchLabels: {tier: 1}\n"),
		want: []string{"a.yaml:12: spec.placement.clusterAffinity.labelSelector.matchLabels[tier]: expected a string, got 1"},
	},
	{
		name: "duplicate key",
		doc:  ppWith("  priority: 1\n  priority: 2\n"),
		want: []string{`a.yaml:10: spec.priority: duplicate key "priority" (first at line 9)`},
	},
	{
		name: "every problem of a document is reported",
		doc:  ppWith("  priority: x\n  preemption: Sometimes\n  placment: {}\n"),
		want: []string{
			`a.yaml:9: spec.priority: expected an integer, got "x"`,
			`a.yaml:10: spec.preemption: "Sometimes" is not one of Always, Never`,
			"a.yaml:11: spec.placment: unknown field (did you mean \"placement\"?)",
		},
	},
}

func TestStrictDecoding(t *testing.T) {
	tests := strictCases
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, problemsOf(t, map[string]string{"a.yaml": tt.doc})); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStrictDecodingAccepts(t *testing.T) {
	tests := []struct {
		name string
		doc  string
	}{
		{"null for any field", ppWith("  placement: null\n  priority: ~\n")},
		{"integral float for an integer", ppWith("  priority: 2.0\n")},
		{"negative priority", ppWith("  priority: -5\n")},
		{"any JSON value", "apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: o}\nspec:\n" +
			"  overrideRules:\n  - overriders:\n      plaintext:\n      - {path: /spec/x, operator: add, value: {a: [1, {b: null}]}}\n"},
		{"anchors, aliases and merge keys", ppWith("  placement:\n    clusterAffinity: &aff\n      clusterNames: [a]\n" +
			"    replicaScheduling:\n      weightPreference:\n        staticWeightList:\n" +
			"        - targetCluster: *aff\n          weight: 1\n        - targetCluster:\n            <<: *aff\n            exclude: [b]\n          weight: 2\n")},
		{"metadata with timestamps and managed fields", "apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\n" +
			"metadata:\n  name: o\n  creationTimestamp: \"2024-01-02T03:04:05Z\"\n  generation: 3\n" +
			"  managedFields:\n  - manager: kubectl\n    fieldsType: FieldsV1\n    fieldsV1: {f:spec: {}}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustLoad(t, map[string]string{"a.yaml": tt.doc})
		})
	}
}

func TestMergeKeysAndAliasesAreExpanded(t *testing.T) {
	set := mustLoad(t, map[string]string{"a.yaml": ppWith("  placement:\n    clusterAffinity: &aff\n      clusterNames: [a]\n" +
		"    replicaScheduling:\n      weightPreference:\n        staticWeightList:\n" +
		"        - targetCluster:\n            <<: *aff\n            exclude: [b]\n          weight: 2\n")})
	got := set.Propagations[0].Policy.Spec.Placement.ReplicaScheduling.WeightPreference.StaticWeightList[0].TargetCluster
	if diff := cmp.Diff([]string{"a"}, got.ClusterNames); diff != "" {
		t.Errorf("merged clusterNames (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b"}, got.ExcludeClusters); diff != "" {
		t.Errorf("explicit exclude (-want +got):\n%s", diff)
	}
}

func TestSoftProblemsBecomeFindings(t *testing.T) {
	tests := []struct {
		name      string
		doc       string
		wantFinds []string
		loaded    bool
	}{
		{
			name:      "unknown metadata field is ignored",
			doc:       "apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata:\n  name: o\n  nnamespace: x\n",
			wantFinds: []string{"a.yaml:5: metadata.nnamespace: unknown field (did you mean \"namespace\"?); ignored"},
			loaded:    true,
		},
		{
			name: "an object where a string is expected skips the document",
			doc:  "apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata:\n  name: {policy-name}\n",
			wantFinds: []string{
				"a.yaml:4: metadata.name: expected a string, got an object (pseudo-YAML or a {placeholder}?); OverridePolicy.policy.karmada.io is not loaded",
			},
		},
		{
			name: "missing selectors in an excerpt skip the document",
			doc:  "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: p\nspec:\n  # ...\n  priority: 1\n",
			wantFinds: []string{
				`a.yaml:5: spec.resourceSelectors: required: list at least one resource selector (taken as left out of an excerpt marked with "..."); PropagationPolicy.policy.karmada.io/default/p is not loaded`,
			},
		},
		{
			// Karmada's webhook (ValidateOverrideRules) checks no plaintext
			// operator or value, and a JSON patch remove ignores a value: the
			// apiserver accepts it, so propagit loads it and warns.
			name:      "a plaintext remove with a value loads, with a warning that the value is ignored",
			doc:       opHead + "      plaintext:\n      - {path: /spec/x, operator: remove, value: 1}\n",
			wantFinds: []string{"a.yaml:9: spec.overrideRules[0].overriders.plaintext[0].value: is ignored: operator remove takes no value"},
			loaded:    true,
		},
		{
			// karmada-semantics.md §1.5; Karmada's ImageOverrider.value:
			// "defaults to empty and ignored when operator is remove", and
			// the webhook does not check it, so the apiserver accepts it.
			name:      "an imageOverrider remove with a value loads, with a warning that the value is ignored",
			doc:       opHead + "      imageOverrider:\n      - {component: Tag, operator: remove, value: v2}\n",
			wantFinds: []string{`a.yaml:9: spec.overrideRules[0].overriders.imageOverrider[0].value: "v2" is ignored: operator remove takes no value`},
			loaded:    true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := mustLoad(t, map[string]string{"a.yaml": tt.doc})
			var got []string
			for _, f := range set.Findings {
				got = append(got, f.String())
			}
			if diff := cmp.Diff(tt.wantFinds, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if loaded := len(set.Propagations)+len(set.Overrides) == 1; loaded != tt.loaded {
				t.Errorf("loaded: got %v, want %v", loaded, tt.loaded)
			}
		})
	}
}

func TestExcerptMarkerDoesNotExcuseWrongValues(t *testing.T) {
	got := problemsOf(t, map[string]string{"a.yaml": ppWith("  preemption: Maybe\n...\n")})
	want := []string{`a.yaml:9: spec.preemption: "Maybe" is not one of Always, Never`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestClusterStatusScalarsAreStrings(t *testing.T) {
	set := mustLoad(t, map[string]string{"c.yaml": "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\n" +
		"metadata: {name: m1}\nspec: {syncMode: Push}\nstatus:\n  kubernetesVersion: 1.30\n  conditions:\n" +
		"  - {type: Ready, status: False, reason: Down, message: x, lastTransitionTime: \"2025-01-17T02:36:26Z\"}\n" +
		"  resourceSummary:\n    allocatable: {cpu: 4, memory: 8Gi}\n"})
	st := set.Clusters[0].Cluster.Status
	if st.Conditions[0].Status != "False" || st.KubernetesVersion != "1.30" {
		t.Errorf("got status %q and version %q, want \"False\" and \"1.30\"", st.Conditions[0].Status, st.KubernetesVersion)
	}
	if cpu := st.ResourceSummary.Allocatable.Cpu().String(); cpu != "4" {
		t.Errorf("allocatable cpu: got %s, want 4", cpu)
	}
}
