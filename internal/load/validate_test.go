package load

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	opHead = "apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata:\n  name: o\nspec:\n  overrideRules:\n  - overriders:\n"
	clHead = "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: member1\nspec:\n"
)

var validationCases = []struct {
	name string
	doc  string
	want []string
}{
	{
		name: "selector needs apiVersion and kind",
		doc:  "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p}\nspec:\n  resourceSelectors:\n  - name: web\n",
		want: []string{"a.yaml:6: spec.resourceSelectors[0].apiVersion: required", "a.yaml:6: spec.resourceSelectors[0].kind: required"},
	},
	{
		name: "PropagationPolicy selects only its own namespace",
		doc:  ppWith("    namespace: other\n"),
		want: []string{`a.yaml:9: spec.resourceSelectors[0].namespace: "other" differs from the policy's namespace "default": a PropagationPolicy only selects resources in its own namespace`},
	},
	{
		name: "preemption Always needs named selectors",
		doc:  ppWith("  preemption: Always\n"),
		want: []string{"a.yaml:7: spec.resourceSelectors[0].name: required when preemption is Always"},
	},
	{
		name: "affinity names are label keys and unique",
		doc:  ppWith("  placement:\n    clusterAffinities:\n    - affinityName: Bad_Name!\n    - affinityName: a\n    - affinityName: a\n"),
		want: []string{
			`a.yaml:11: spec.placement.clusterAffinities[0].affinityName: "Bad_Name!" is invalid: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			`a.yaml:13: spec.placement.clusterAffinities[2].affinityName: "a" is used by another term: affinity names must be unique`,
		},
	},
	{
		name: "field selector keys and operators",
		doc:  ppWith("  placement:\n    clusterAffinity:\n      fieldSelector:\n        matchExpressions:\n        - {key: city, operator: Exists}\n"),
		want: []string{
			`a.yaml:13: spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].key: "city" is not one of provider, region, zone`,
			`a.yaml:13: spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].operator: "Exists" is not one of In, NotIn`,
		},
	},
	{
		name: "spread constraints",
		doc:  ppWith("  placement:\n    spreadConstraints:\n    - {spreadByField: region, spreadByLabel: x, minGroups: 3, maxGroups: 2}\n"),
		want: []string{
			"a.yaml:10: spec.placement.spreadConstraints: spreadByField region also needs a spreadByField: cluster constraint",
			"a.yaml:11: spec.placement.spreadConstraints[0]: spreadByField and spreadByLabel cannot both be set",
			"a.yaml:11: spec.placement.spreadConstraints[0].maxGroups: 2 is less than minGroups 3",
		},
	},
	{
		// karmada-semantics.md §1.3: staticWeightList weight is int64 >= 1
		// (StaticClusterWeight.weight, kubebuilder Minimum=1): the
		// apiserver rejects 0.
		name: "a static weight of 0 is rejected",
		doc:  ppWith("  placement:\n    replicaScheduling:\n      weightPreference:\n        staticWeightList:\n        - targetCluster: {}\n          weight: 0\n"),
		want: []string{"a.yaml:14: spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: 0 must be at least 1 (Karmada's CRD minimum); leave the cluster out of staticWeightList to give it no replicas"},
	},
	{
		name: "replica scheduling enums and weights",
		doc: ppWith("  placement:\n    replicaScheduling:\n      replicaSchedulingType: Split\n      replicaDivisionPreference: Even\n" +
			"      weightPreference:\n        dynamicWeight: Free\n        staticWeightList:\n        - {targetCluster: {}, weight: -1}\n"),
		want: []string{
			`a.yaml:11: spec.placement.replicaScheduling.replicaSchedulingType: "Split" is not one of Duplicated, Divided`,
			`a.yaml:12: spec.placement.replicaScheduling.replicaDivisionPreference: "Even" is not one of Aggregated, Weighted`,
			`a.yaml:14: spec.placement.replicaScheduling.weightPreference.dynamicWeight: "Free" is not one of AvailableReplicas`,
			"a.yaml:16: spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: -1 must be at least 1 (Karmada's CRD minimum); leave the cluster out of staticWeightList to give it no replicas",
		},
	},
	{
		name: "cluster tolerations",
		doc:  ppWith("  placement:\n    clusterTolerations:\n    - {key: a, operator: Gt, value: \"3\"}\n    - {key: b, operator: Exists, value: x, effect: NoExecut}\n"),
		want: []string{
			`a.yaml:11: spec.placement.clusterTolerations[0].operator: "Gt" is not supported for cluster tolerations: use Equal or Exists`,
			"a.yaml:12: spec.placement.clusterTolerations[1].value: must be empty when operator is Exists",
			`a.yaml:12: spec.placement.clusterTolerations[1].effect: "NoExecut" is not one of NoSchedule, PreferNoSchedule, NoExecute`,
		},
	},
	{
		name: "application failover",
		doc:  ppWith("  failover:\n    application:\n      purgeMode: Never\n      gracePeriodSeconds: 30\n"),
		want: []string{
			"a.yaml:10: spec.failover.application: requires spec.propagateDeps: true",
			"a.yaml:12: spec.failover.application.gracePeriodSeconds: only allowed with purgeMode Gracefully, not Never",
		},
	},
	{
		name: "purge modes",
		doc:  ppWith("  propagateDeps: true\n  failover:\n    application:\n      purgeMode: Gently\n      gracePeriodSeconds: 0\n    cluster: {purgeMode: Never}\n"),
		want: []string{
			`a.yaml:12: spec.failover.application.purgeMode: "Gently" is not one of Directly, Gracefully, Never, Immediately, Graciously`,
			"a.yaml:13: spec.failover.application.gracePeriodSeconds: 0 must be greater than 0",
			`a.yaml:14: spec.failover.cluster.purgeMode: "Never" is not one of Directly, Gracefully, Immediately, Graciously`,
		},
	},
	{
		name: "conflict resolution and suspension",
		doc:  ppWith("  conflictResolution: Replace\n  suspension:\n    dispatching: true\n    dispatchingOnClusters: {clusterNames: [a]}\n"),
		want: []string{
			`a.yaml:9: spec.conflictResolution: "Replace" is not one of Abort, Overwrite`,
			"a.yaml:12: spec.suspension.dispatchingOnClusters: cannot be set when dispatching is true",
		},
	},
	{
		name: "plaintext operator, pointer and value",
		doc: opHead + "      plaintext:\n      - {path: spec.replicas, operator: repalce, value: 1}\n" +
			"      - {path: /spec/replicas, operator: add}\n",
		want: []string{
			`a.yaml:9: spec.overrideRules[0].overriders.plaintext[0].path: "spec.replicas" is not a JSON pointer: it must start with "/" (e.g. /spec/replicas)`,
			`a.yaml:9: spec.overrideRules[0].overriders.plaintext[0].operator: "repalce" is not one of add, remove, replace`,
			"a.yaml:10: spec.overrideRules[0].overriders.plaintext[1].value: required when operator is add",
		},
	},
	{
		name: "image, command and label overriders",
		doc: opHead + "      imageOverrider:\n      - {component: Digest, operator: replace, value: x, predicate: {path: \"$.spec\"}}\n" +
			"      commandOverrider:\n      - {operator: replace}\n      labelsOverrider:\n      - {operator: add, value: {\"bad key\": v}}\n",
		want: []string{
			`a.yaml:9: spec.overrideRules[0].overriders.imageOverrider[0].predicate.path: "$.spec" is not a JSON pointer: it must start with "/" (e.g. /spec/replicas)`,
			`a.yaml:9: spec.overrideRules[0].overriders.imageOverrider[0].component: "Digest" is not one of Registry, Repository, Tag`,
			"a.yaml:11: spec.overrideRules[0].overriders.commandOverrider[0].containerName: required",
			`a.yaml:11: spec.overrideRules[0].overriders.commandOverrider[0].operator: "replace" is not one of add, remove`,
			`a.yaml:13: spec.overrideRules[0].overriders.labelsOverrider[0].value[bad key]: "bad key" is invalid: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		},
	},
	{
		name: "field overrider needs exactly one of json and yaml",
		doc:  opHead + "      fieldOverrider:\n      - {fieldPath: /data/x}\n      - fieldPath: /data/y\n        json: [{subPath: /a, operator: add, value: 1}]\n        yaml: [{subPath: b, operator: remove}]\n",
		want: []string{
			"a.yaml:9: spec.overrideRules[0].overriders.fieldOverrider[0]: needs one of json or yaml",
			"a.yaml:10: spec.overrideRules[0].overriders.fieldOverrider[1]: json and yaml cannot both be set",
			`a.yaml:12: spec.overrideRules[0].overriders.fieldOverrider[1].yaml[0].subPath: "b" is not a JSON pointer: it must start with "/" (e.g. /spec/replicas)`,
		},
	},
	{
		name: "rule needs overriders; both forms at once",
		doc: "apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: o}\nspec:\n  overrideRules:\n" +
			"  - targetCluster: {clusterNames: [a]}\n  overriders:\n    plaintext: [{path: /x, operator: remove}]\n",
		want: []string{
			"a.yaml:6: spec.overrideRules[0].overriders: required",
			"a.yaml:7: spec.overriders: cannot be used together with overrideRules: move it into an overrideRules entry",
		},
	},
	{
		// karmada-semantics.md §1.5 (label keys and values, k8s rules);
		// Karmada's ValidateOverrideRules runs ValidateLabels on every
		// labelsOverrider value, whatever the operator.
		name: "labelsOverrider remove with an invalid label value is rejected",
		doc:  opHead + "      labelsOverrider:\n      - operator: remove\n        value: {app: \"not a label value\"}\n",
		want: []string{`a.yaml:10: spec.overrideRules[0].overriders.labelsOverrider[0].value[app]: "not a label value" is invalid: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
	},
	{
		name: "cluster name, sync mode and taints",
		doc: "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: a-very-long-cluster-name-that-goes-past-forty-eight-chars\n" +
			"spec:\n  syncMode: push\n  taints:\n  - {key: k, effect: PreferNoExecute}\n",
		want: []string{
			`a.yaml:4: metadata.name: "a-very-long-cluster-name-that-goes-past-forty-eight-chars" is longer than 48 characters`,
			`a.yaml:6: spec.syncMode: "push" is not one of Push, Pull`,
			`a.yaml:8: spec.taints[0].effect: "PreferNoExecute" is not one of NoSchedule, NoExecute`,
		},
	},
	{
		// karmada-semantics.md §1.6; Karmada's ValidateClusterSpec:
		// impersonatorSecretRef needs namespace and name like secretRef.
		name: "cluster impersonatorSecretRef needs namespace and name",
		doc:  clHead + "  syncMode: Push\n  impersonatorSecretRef: {name: imp}\n",
		want: []string{"a.yaml:7: spec.impersonatorSecretRef.namespace: required"},
	},
	{
		// karmada-semantics.md §1.6; Karmada's ValidateClusterAPIEndpoint:
		// the endpoint must parse as a URL with a host.
		name: "cluster apiEndpoint without a scheme has no host and is rejected",
		doc:  clHead + "  syncMode: Push\n  apiEndpoint: member1.example.com\n",
		want: []string{`a.yaml:7: spec.apiEndpoint: "member1.example.com" has no host: write it as a URL such as https://10.0.0.1:6443`},
	},
	{
		// Karmada's ValidateClusterAPIEndpoint: no query or fragment.
		name: "cluster apiEndpoint with a query is rejected",
		doc:  clHead + "  syncMode: Push\n  apiEndpoint: https://10.0.0.1:6443/?x=1\n",
		want: []string{`a.yaml:7: spec.apiEndpoint: "https://10.0.0.1:6443/?x=1": fragments and query parameters are not permitted in the URL`},
	},
	{
		// Karmada's ValidateClusterProxyURL: http, https or socks5.
		name: "cluster proxyURL with another scheme is rejected",
		doc:  clHead + "  syncMode: Push\n  proxyURL: ftp://proxy:21\n",
		want: []string{`a.yaml:7: spec.proxyURL: "ftp://proxy:21" is not an http, https or socks5 URL`},
	},
	{
		// karmada-semantics.md §1.6 (resourceModels); Karmada's
		// ValidateClusterResourceModels: distinct grades, the same
		// resources in every grade, supported names, max above min.
		name: "cluster resource models: duplicate grade, unsupported name, max not above min",
		doc: clHead + "  syncMode: Push\n  resourceModels:\n" +
			"  - grade: 0\n    ranges:\n    - {name: cpu, min: 0, max: 1}\n" +
			"  - grade: 0\n    ranges:\n    - {name: gpu, min: 2, max: 2}\n",
		want: []string{
			"a.yaml:11: spec.resourceModels[1].grade: 0 is used by another model: grades must differ",
			`a.yaml:13: spec.resourceModels[1].ranges[0].name: "gpu" is not one of cpu, ephemeral-storage, memory, storage`,
			`a.yaml:13: spec.resourceModels[1].ranges[0].name: "gpu" differs from the first model's "cpu": every grade must list the same resources in the same order`,
			"a.yaml:13: spec.resourceModels[1].ranges[0].max: 2 must be greater than min 2",
		},
	},
	{
		// karmada-semantics.md §1.6 (taints); Karmada's
		// lifted.ValidateClusterTaints, as Kubernetes for Nodes: one taint
		// per key and effect.
		name: "cluster taints with the same key and effect are rejected",
		doc:  clHead + "  syncMode: Push\n  taints:\n  - {key: k, value: a, effect: NoSchedule}\n  - {key: k, value: b, effect: NoSchedule}\n  - {key: k, effect: NoExecute}\n",
		want: []string{`a.yaml:9: spec.taints[1]: another taint has key "k" and effect NoSchedule: taints must be unique by key and effect`},
	},
	{
		// karmada-semantics.md §1.6 (taints); Karmada's
		// validateClusterTaintEffect allows NoSchedule and NoExecute (and,
		// in newer releases, SelectiveNoExecute), never PreferNoSchedule.
		name: "cluster taint effect PreferNoSchedule is rejected",
		doc:  clHead + "  syncMode: Push\n  taints:\n  - {key: k, effect: PreferNoSchedule}\n",
		want: []string{`a.yaml:8: spec.taints[0].effect: "PreferNoSchedule" is not one of NoSchedule, NoExecute`},
	},
	{
		name: "ClusterTaintPolicy needs taints, complete conditions and no duplicate taint",
		doc: "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterTaintPolicy\nmetadata: {name: t}\nspec:\n" +
			"  addOnConditions:\n  - {conditionType: Ready, operator: In}\n" +
			"  taints:\n  - {key: a, effect: NoSchedule}\n  - {key: a, effect: NoSchedule}\n  - {effect: NoExecute}\n",
		want: []string{
			"a.yaml:6: spec.addOnConditions[0].statusValues: is required",
			"a.yaml:9: spec.taints[1]: duplicate taint with key \"a\" and effect NoSchedule",
			"a.yaml:10: spec.taints[2].key: required",
		},
	},
	{
		name: "ClusterTaintPolicy without taints",
		doc:  "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterTaintPolicy\nmetadata: {name: t}\nspec:\n  addOnConditions:\n  - {conditionType: Ready, operator: In, statusValues: [\"False\"]}\n",
		want: []string{"a.yaml:4: spec.taints: needs at least one taint"},
	},
	{
		name: "cluster spec.taint is not a field",
		doc:  clHead + "  taint:\n  - {key: k, effect: NoSchedule}\n",
		want: []string{"a.yaml:6: spec.taint: unknown field (did you mean \"taints\"?)"},
	},
}

func TestValidation(t *testing.T) {
	tests := validationCases
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, problemsOf(t, map[string]string{"a.yaml": tt.doc})); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidationAccepts(t *testing.T) {
	tests := []struct {
		name string
		doc  string
	}{
		{"old purge mode names", ppWith("  propagateDeps: true\n  failover:\n    application:\n      purgeMode: Graciously\n      gracePeriodSeconds: 60\n    cluster: {purgeMode: Immediately}\n")},
		{"toleration with only an effect", ppWith("  placement:\n    clusterTolerations:\n    - effect: NoSchedule\n")},
		{"overflow affinities with Aggregated", ppWith("  placement:\n    clusterAffinities:\n    - affinityName: primary\n      clusterNames: [a]\n" +
			"      overflowAffinities:\n      - {affinityName: burst, clusterNames: [b]}\n    replicaScheduling:\n      replicaSchedulingType: Divided\n      replicaDivisionPreference: Aggregated\n")},
		{"empty legacy overriders next to rules", opHead + "      plaintext: [{path: /a, operator: remove}]\n  overriders: {}\n"},
		{"legacy form alone", "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterOverridePolicy\nmetadata: {name: o}\nspec:\n" +
			"  targetCluster: {clusterNames: [a]}\n  overriders:\n    annotationsOverrider: [{operator: add, value: {example.com/x: \"any value\"}}]\n"},
		{"cluster with a socks5 proxy and an https endpoint", clHead + "  syncMode: Push\n  apiEndpoint: https://10.0.0.1:6443\n  proxyURL: socks5://proxy:1080\n"},
		{"cluster with two contiguous resource models", clHead + "  syncMode: Push\n  resourceModels:\n" +
			"  - grade: 0\n    ranges:\n    - {name: cpu, min: 0, max: 1}\n    - {name: memory, min: 0, max: 4Gi}\n" +
			"  - grade: 1\n    ranges:\n    - {name: cpu, min: 1, max: 2}\n    - {name: memory, min: 4Gi, max: 16Gi}\n"},
		{"cluster with deprecated zone", clHead + "  syncMode: Pull\n  zone: z1\n  provider: aws\n"},
		{"ClusterTaintPolicy with an operator Karmada never matches", "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterTaintPolicy\nmetadata: {name: t}\nspec:\n" +
			"  addOnConditions:\n  - {conditionType: Ready, operator: Exists, statusValues: [\"False\"]}\n  taints:\n  - {key: a, effect: NoExecute}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustLoad(t, map[string]string{"a.yaml": tt.doc})
		})
	}
}
