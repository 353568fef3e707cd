package override

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

// replicas is a rule that sets spec.replicas.
func replicas(n string) policyv1alpha1.Overriders {
	return plain(set("replace", "/spec/replicas", n))
}

// appliedPolicies lists the Policy of every change, in order.
func appliedPolicies(res Result) []string {
	var out []string
	for _, c := range res.Changes {
		out = append(out, c.Policy)
	}
	return out
}

func TestApplyOrder(t *testing.T) {
	tests := []struct {
		name         string
		file         string
		policies     []load.Override
		wantOrder    []string
		wantReplicas any
	}{
		{
			name: "cluster policies run before namespaced ones whatever their names",
			file: "deployment.yaml",
			policies: []load.Override{
				op("a", withRule(nil, replicas("2"))),
				cop("z", withRule(nil, replicas("1"))),
			},
			wantOrder:    []string{"ClusterOverridePolicy.policy.karmada.io/z", "OverridePolicy.policy.karmada.io/default/a"},
			wantReplicas: int64(2),
		},
		{
			name: "least specific first so the name match wins",
			file: "deployment.yaml",
			policies: []load.Override{
				op("a-name", selecting(deployments("web")), withRule(nil, replicas("3"))),
				op("m-label", selecting(labelled("app", "web")), withRule(nil, replicas("2"))),
				op("z-all", withRule(nil, replicas("1"))),
			},
			wantOrder:    []string{"OverridePolicy.policy.karmada.io/default/z-all", "OverridePolicy.policy.karmada.io/default/m-label", "OverridePolicy.policy.karmada.io/default/a-name"},
			wantReplicas: int64(3),
		},
		{
			name: "a policy's priority is its best selector",
			file: "deployment.yaml",
			policies: []load.Override{
				op("a", selecting(deployments("web"), deployments("")), withRule(nil, replicas("2"))),
				op("b", selecting(deployments("")), withRule(nil, replicas("1"))),
			},
			wantOrder:    []string{"OverridePolicy.policy.karmada.io/default/b", "OverridePolicy.policy.karmada.io/default/a"},
			wantReplicas: int64(2),
		},
		{
			name: "equal priority runs by name, empty selectors counting as kind match",
			file: "deployment.yaml",
			policies: []load.Override{
				op("b", selecting(deployments("")), withRule(nil, replicas("2"))),
				op("a", withRule(nil, replicas("1"))),
			},
			wantOrder:    []string{"OverridePolicy.policy.karmada.io/default/a", "OverridePolicy.policy.karmada.io/default/b"},
			wantReplicas: int64(2),
		},
		{
			name: "cluster policies are ordered the same way among themselves",
			file: "deployment.yaml",
			policies: []load.Override{
				cop("a", selecting(deployments("web")), withRule(nil, replicas("2"))),
				cop("b", withRule(nil, replicas("1"))),
			},
			wantOrder:    []string{"ClusterOverridePolicy.policy.karmada.io/b", "ClusterOverridePolicy.policy.karmada.io/a"},
			wantReplicas: int64(2),
		},
		{
			name: "policies of another namespace and non-matching selectors are ignored",
			file: "deployment.yaml",
			policies: []load.Override{
				op("other-ns", inNamespace("shop"), withRule(nil, replicas("7"))),
				op("other-name", selecting(deployments("api")), withRule(nil, replicas("8"))),
				op("other-label", selecting(labelled("app", "api")), withRule(nil, replicas("9"))),
				op("explicit-ns", selecting(policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop"}),
					withRule(nil, replicas("10"))),
			},
			wantReplicas: int64(3),
		},
		{
			name: "a cluster policy selector with a namespace matches only that namespace",
			file: "deployment.yaml",
			policies: []load.Override{
				cop("shop-only", selecting(policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop"}),
					withRule(nil, replicas("7"))),
				cop("default-only", selecting(policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default"}),
					withRule(nil, replicas("8"))),
			},
			wantOrder:    []string{"ClusterOverridePolicy.policy.karmada.io/default-only"},
			wantReplicas: int64(8),
		},
		{
			name: "a cluster-scoped object gets cluster policies only",
			file: "namespace.yaml",
			policies: []load.Override{
				op("ns", inNamespace(""), withRule(nil, plain(set("add", "/metadata/labels", `{"a":"b"}`)))),
				cop("all", withRule(nil, plain(set("add", "/metadata/labels", `{"c":"d"}`)))),
			},
			wantOrder:    []string{"ClusterOverridePolicy.policy.karmada.io/all"},
			wantReplicas: "<absent>",
		},
		{
			name: "labels added by a cluster policy make a namespaced selector match",
			file: "deployment.yaml",
			policies: []load.Override{
				cop("tier", withRule(nil, policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
					{Operator: "add", Value: map[string]string{"tier": "gold"}},
				}})),
				op("gold", selecting(labelled("tier", "gold")), withRule(nil, replicas("9"))),
			},
			wantOrder:    []string{"ClusterOverridePolicy.policy.karmada.io/tier", "OverridePolicy.policy.karmada.io/default/gold"},
			wantReplicas: int64(9),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := readObject(t, tt.file)
			res, err := Apply(obj, member("member1", nil), tt.policies)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if diff := cmp.Diff(tt.wantOrder, appliedPolicies(res)); diff != "" {
				t.Errorf("order mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantReplicas, valueAt(t, obj, "/spec/replicas")); diff != "" {
				t.Errorf("replicas mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyRulesByCluster(t *testing.T) {
	policies := []load.Override{
		op("web",
			withRule(clusters("member1"), replicas("1")),
			withRule(nil, replicas("2")),
			withRule(&policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"member1"}}, replicas("3")),
		),
		cop("base", withRule(clusters("member2"), replicas("4"))),
	}
	tests := []struct {
		name        string
		cluster     string
		wantCluster []Applied
		wantApplied []Applied
		wantRules   []int
	}{
		{
			name:        "rules for the cluster and for every cluster apply in list order",
			cluster:     "member1",
			wantApplied: []Applied{{PolicyName: "web", Overriders: replicas("1")}, {PolicyName: "web", Overriders: replicas("2")}},
			wantRules:   []int{0, 1},
		},
		{
			name:        "excluded and other-cluster rules are skipped",
			cluster:     "member2",
			wantCluster: []Applied{{PolicyName: "base", Overriders: replicas("4")}},
			wantApplied: []Applied{{PolicyName: "web", Overriders: replicas("2")}, {PolicyName: "web", Overriders: replicas("3")}},
			wantRules:   []int{0, 1, 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Apply(readObject(t, "deployment.yaml"), member(tt.cluster, nil), policies)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if diff := cmp.Diff(tt.wantCluster, res.ClusterOverrides); diff != "" {
				t.Errorf("cluster overrides mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantApplied, res.Overrides); diff != "" {
				t.Errorf("overrides mismatch (-want +got):\n%s", diff)
			}
			var rules []int
			for _, c := range res.Changes {
				rules = append(rules, c.Rule)
			}
			if diff := cmp.Diff(tt.wantRules, rules); diff != "" {
				t.Errorf("rule indices mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyRecordsAppliedSortedByName(t *testing.T) {
	policies := []load.Override{
		op("b-name", selecting(deployments("web")), withRule(nil, replicas("2"))),
		op("c-all", withRule(nil, replicas("1")), withRule(nil, replicas("5"))),
		op("a-label", selecting(labelled("app", "web")), withRule(nil, replicas("3"))),
	}
	res, err := Apply(readObject(t, "deployment.yaml"), member("member1", nil), policies)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	want := []Applied{
		{PolicyName: "a-label", Overriders: replicas("3")},
		{PolicyName: "b-name", Overriders: replicas("2")},
		{PolicyName: "c-all", Overriders: replicas("1")},
		{PolicyName: "c-all", Overriders: replicas("5")},
	}
	if diff := cmp.Diff(want, res.Overrides); diff != "" {
		t.Errorf("applied mismatch (-want +got):\n%s", diff)
	}
	wantOrder := []string{"OverridePolicy.policy.karmada.io/default/c-all", "OverridePolicy.policy.karmada.io/default/c-all", "OverridePolicy.policy.karmada.io/default/a-label", "OverridePolicy.policy.karmada.io/default/b-name"}
	if diff := cmp.Diff(wantOrder, appliedPolicies(res)); diff != "" {
		t.Errorf("applied order mismatch (-want +got):\n%s", diff)
	}
}

func TestApplyDeprecatedForm(t *testing.T) {
	deprecated := func(target *policyv1alpha1.ClusterAffinity, ov policyv1alpha1.Overriders) policyOption {
		return func(p *policyv1alpha1.OverridePolicy) {
			p.Spec.TargetCluster = target
			p.Spec.Overriders = &ov
		}
	}
	tests := []struct {
		name         string
		policy       load.Override
		wantApplied  []Applied
		wantReplicas any
	}{
		{
			name:         "top-level overriders apply when overrideRules is empty",
			policy:       op("old", deprecated(clusters("member1"), replicas("4"))),
			wantApplied:  []Applied{{PolicyName: "old", Overriders: replicas("4")}},
			wantReplicas: int64(4),
		},
		{
			name:         "top-level targetCluster filters clusters",
			policy:       op("old", deprecated(clusters("member2"), replicas("4"))),
			wantReplicas: int64(3),
		},
		{
			name:         "top-level overriders are ignored next to overrideRules",
			policy:       op("both", deprecated(nil, replicas("4")), withRule(nil, replicas("5"))),
			wantApplied:  []Applied{{PolicyName: "both", Overriders: replicas("5")}},
			wantReplicas: int64(5),
		},
		{
			name:         "a policy with neither form is recorded with empty overriders",
			policy:       op("empty"),
			wantApplied:  []Applied{{PolicyName: "empty"}},
			wantReplicas: int64(3),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := readObject(t, "deployment.yaml")
			res, err := Apply(obj, member("member1", nil), []load.Override{tt.policy})
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if diff := cmp.Diff(tt.wantApplied, res.Overrides); diff != "" {
				t.Errorf("applied mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantReplicas, valueAt(t, obj, "/spec/replicas")); diff != "" {
				t.Errorf("replicas mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyDeprecatedFormErrorNamesTopLevelField(t *testing.T) {
	ov := plain(set("replace", "/spec/foo", "1"))
	p := op("old")
	p.Policy.Spec.Overriders = &ov
	_, err := Apply(readObject(t, "deployment.yaml"), member("member1", nil), []load.Override{p})
	want := "OverridePolicy.policy.karmada.io/default/old: overriders.plaintext: failed to apply patch: " +
		"replace operation does not apply: doc is missing key: /spec/foo: missing value"
	if diff := cmp.Diff(want, errString(err)); diff != "" {
		t.Errorf("error mismatch (-want +got):\n%s", diff)
	}
}

func TestApplyErrorStopsEverything(t *testing.T) {
	obj := readObject(t, "deployment.yaml")
	policies := []load.Override{
		cop("a-first", withRule(nil, replicas("1"))),
		cop("b-broken", withRule(clusters("member2"), replicas("2")), withRule(nil, plain(set("remove", "/spec/foo", "")))),
		op("later", withRule(nil, replicas("9"))),
	}
	res, err := Apply(obj, member("member1", nil), policies)
	var ruleErr *RuleError
	if !errors.As(err, &ruleErr) {
		t.Fatalf("Apply error = %v, want a *RuleError", err)
	}
	wantErr := RuleError{
		Policy: "ClusterOverridePolicy.policy.karmada.io/b-broken",
		Source: load.Source{Path: "policies/b-broken.yaml", Line: 1},
		Rule:   1,
		Field:  "overrideRules[1].overriders.plaintext",
	}
	if diff := cmp.Diff(wantErr, *ruleErr, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Err" }, cmp.Ignore())); diff != "" {
		t.Errorf("rule error mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ClusterOverridePolicy.policy.karmada.io/a-first"}, appliedPolicies(res)); diff != "" {
		t.Errorf("changes before the failure mismatch (-want +got):\n%s", diff)
	}
	if res.Overrides != nil {
		t.Errorf("namespaced policies ran after a failure: %v", res.Overrides)
	}
}

func TestApplyTargetsClustersByLabel(t *testing.T) {
	policies := []load.Override{op("eu", withRule(&policyv1alpha1.ClusterAffinity{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}},
	}, replicas("6")))}
	for cluster, want := range map[string]any{"eu": int64(6), "us": int64(3)} {
		obj := readObject(t, "deployment.yaml")
		if _, err := Apply(obj, member("m-"+cluster, map[string]string{"region": cluster}), policies); err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if diff := cmp.Diff(want, valueAt(t, obj, "/spec/replicas")); diff != "" {
			t.Errorf("region %s replicas mismatch (-want +got):\n%s", cluster, diff)
		}
	}
}
