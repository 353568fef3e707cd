package schedule

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// quantityEqual compares quantities by value, whatever their format.
var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// equateEmpty treats nil and empty slices and maps alike.
var equateEmpty = cmpopts.EquateEmpty()

// loadTemplate reads testdata/templates/<name>.yaml.
func loadTemplate(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "templates", name+".yaml"))
	if err != nil {
		t.Fatalf("failed to read template %s: %v", name, err)
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatalf("failed to decode template %s: %v", name, err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// deployment is an apps/v1 Deployment with the given replicas and no
// requests.
func deployment(replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{
			"replicas": replicas,
			"template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "app"}},
			}},
		},
	}}
}

// configMap is a template without replicas.
func configMap() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "settings", "namespace": "default"},
	}}
}

type clusterOpt func(*clusterv1alpha1.Cluster)

func newCluster(name string, opts ...clusterOpt) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// clusters builds one status-less cluster per name.
func clusters(names ...string) []*clusterv1alpha1.Cluster {
	out := make([]*clusterv1alpha1.Cluster, len(names))
	for i, n := range names {
		out[i] = newCluster(n)
	}
	return out
}

func withLabels(kv ...string) clusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		c.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			c.Labels[kv[i]] = kv[i+1]
		}
	}
}

func withRegion(region string) clusterOpt {
	return func(c *clusterv1alpha1.Cluster) { c.Spec.Region = region }
}

func withTaint(key, value string, effect corev1.TaintEffect) clusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

// withStatus gives the cluster a Ready=True status serving apps/v1
// Deployment and v1 ConfigMap, with unknown capacity.
func withStatus() clusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		if c.Status != nil {
			return
		}
		c.Status = &clusterv1alpha1.ClusterStatus{
			Conditions: []metav1.Condition{{Type: clusterv1alpha1.ConditionReady, Status: metav1.ConditionTrue}},
			APIEnablements: []clusterv1alpha1.APIEnablement{
				{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}},
				{GroupVersion: "v1", Resources: []clusterv1alpha1.APIResource{{Name: "configmaps", Kind: "ConfigMap"}}},
			},
		}
	}
}

// withReady sets the Ready condition (nil status first gets withStatus).
func withReady(status metav1.ConditionStatus) clusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		withStatus()(c)
		c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ConditionReady, Status: status}}
	}
}

// withFree gives the cluster room for pods more pods (and a status).
func withFree(pods int64) clusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		withStatus()(c)
		c.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{
			Allocatable: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(pods, resource.DecimalSI)},
		}
	}
}

// freeClusters builds m1, m2, … with the given free pods.
func freeClusters(free ...int64) []*clusterv1alpha1.Cluster {
	out := make([]*clusterv1alpha1.Cluster, len(free))
	for i, f := range free {
		out[i] = newCluster("m"+string(rune('1'+i)), withFree(f))
	}
	return out
}

func affinityNames(names ...string) *policyv1alpha1.ClusterAffinity {
	return &policyv1alpha1.ClusterAffinity{ClusterNames: names}
}

func divided(preference string) *policyv1alpha1.ReplicaSchedulingStrategy {
	return &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingDivided,
		ReplicaDivisionPreference: preference,
	}
}

func dynamicRS() *policyv1alpha1.ReplicaSchedulingStrategy {
	rs := divided(policyv1alpha1.DivisionWeighted)
	rs.WeightPreference = &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightAvailable}
	return rs
}

// staticRS weighs clusters by name: staticRS("a", 1, "b", 2).
func staticRS(nameWeight ...any) *policyv1alpha1.ReplicaSchedulingStrategy {
	rs := divided(policyv1alpha1.DivisionWeighted)
	rs.WeightPreference = &policyv1alpha1.ClusterPreferences{}
	for i := 0; i+1 < len(nameWeight); i += 2 {
		rs.WeightPreference.StaticWeightList = append(rs.WeightPreference.StaticWeightList, policyv1alpha1.StaticClusterWeight{
			TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{nameWeight[i].(string)}},
			Weight:        int64(nameWeight[i+1].(int)),
		})
	}
	return rs
}

// placed builds a placement result: placed("a", 1, "b", 2).
func placed(nameReplicas ...any) []TargetCluster {
	var out []TargetCluster
	for i := 0; i+1 < len(nameReplicas); i += 2 {
		out = append(out, TargetCluster{Name: nameReplicas[i].(string), Replicas: int32(nameReplicas[i+1].(int))})
	}
	return out
}

// previous wraps a previous placement.
func previous(nameReplicas ...any) *Previous {
	return &Previous{Clusters: placed(nameReplicas...)}
}

// errorKind summarises an error for comparison: "" (none), "fit" or "other".
func errorKind(err error) string {
	if err == nil {
		return ""
	}
	se, ok := err.(*Error)
	if !ok {
		return "not *Error: " + err.Error()
	}
	if se.NoClusterFit {
		return "fit"
	}
	return "other"
}
