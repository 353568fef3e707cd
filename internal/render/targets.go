package render

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/override"
	"github.com/propagit/propagit/internal/schedule"
)

// renderTargets builds the final object of b for each of its clusters, in
// Karmada's order: copy, revise replicas, split Job completions, cluster
// overrides then overrides, stamp, prune. A failure on one cluster leaves
// that cluster without the object and the others untouched. A frozen old
// copy (a target that has its object already) is left as it is, unless its
// cluster is no longer declared.
func renderTargets(b *Binding, clusters []*clusterv1alpha1.Cluster, overrides []load.Override, ip *interpret.Interpreter) {
	if len(b.Targets) == 0 {
		return
	}
	byName := map[string]*clusterv1alpha1.Cluster{}
	for _, c := range clusters {
		byName[c.Name] = c
	}
	workload := b.Decision != nil && b.Decision.Workload
	completions := splitCompletions(b, workload)
	for _, t := range b.Targets {
		c := byName[t.Cluster]
		if c == nil {
			t.Error, t.Object = errUndeclaredCluster, nil
			continue
		}
		if t.Object != nil || t.Failure != nil {
			continue // frozen, or failed before rendering (interpret.go)
		}
		obj := b.Template.Object.DeepCopy()
		var scheduled *int32
		if workload && t.Scheduled {
			revised, err := reviseReplicasOf(obj, t.Replicas, ip)
			if err != nil {
				t.Failure = interpretFailure(b, t.Cluster, err)
				t.Error = err.Error()
				continue
			}
			obj = revised
			if n, ok := completions[t.Cluster]; ok {
				_ = unstructured.SetNestedField(obj.Object, int64(n), "spec", "completions")
			}
			r := t.Replicas
			scheduled = &r
		}
		res, err := override.Apply(obj, c, overrides)
		t.Overrides = res
		if err != nil {
			t.Failure = overrideFailure(b, t.Cluster, overrides, err)
			t.Error = err.Error()
			continue
		}
		if f := sealedFailure(b, t.Cluster, obj, res, overrides); f != nil {
			t.Failure, t.Error = f, f.String()
			continue
		}
		if fe := validate(obj); fe != nil {
			t.Failure = invalidFailure(b, t.Cluster, fe)
			t.Error = t.Failure.Path + ": " + t.Failure.Message
			continue
		}
		stamp(obj, b, scheduled)
		prune(obj)
		t.Object = obj
	}
}

// errUndeclaredCluster is the Error of a target whose cluster is gone
// from Git: not a render failure, the cluster gets no Work at all.
const errUndeclaredCluster = "cluster is not declared in Git"

// reviseReplicas writes the cluster's replicas into the kind's replica field
// (Karmada's ReviseReplica): spec.replicas for Deployment, ReplicaSet and
// StatefulSet, spec.parallelism for Job.
func reviseReplicas(obj *unstructured.Unstructured, replicas int32) {
	switch obj.GroupVersionKind().GroupKind().String() {
	case "Deployment.apps", "ReplicaSet.apps", "StatefulSet.apps":
		_ = unstructured.SetNestedField(obj.Object, int64(replicas), "spec", "replicas")
	case "Job.batch":
		_ = unstructured.SetNestedField(obj.Object, int64(replicas), "spec", "parallelism")
	}
}

// splitCompletions divides a Divided Job's spec.completions among its
// clusters by Webster, with each cluster's parallelism as its votes.
func splitCompletions(b *Binding, workload bool) map[string]int32 {
	obj := b.Template.Object
	if !workload || obj.GroupVersionKind().GroupKind().String() != "Job.batch" || !divided(b) {
		return nil
	}
	completions, found, _ := unstructured.NestedInt64(obj.Object, "spec", "completions")
	if !found {
		return nil
	}
	var parties []schedule.Party
	for _, t := range b.Targets {
		if t.Scheduled && t.Evicted == nil {
			parties = append(parties, schedule.Party{Name: t.Cluster, Votes: int64(t.Replicas)})
		}
	}
	seats := schedule.Webster(int32(completions), parties)
	out := map[string]int32{}
	for i, p := range parties {
		out[p.Name] = seats[i]
	}
	return out
}

func divided(b *Binding) bool {
	if b.Choice.Winner == nil {
		return false
	}
	rs := b.Choice.Winner.Policy.Policy.Spec.Placement.ReplicaScheduling
	return rs != nil && rs.ReplicaSchedulingType != "Duplicated"
}
