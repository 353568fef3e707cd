package diff

import (
	"bytes"
	"path"
	"reflect"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/guard"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// Input is what Compare reads.
type Input struct {
	Base, Head                 *render.Result
	BaseRevision, HeadRevision Revision
	// Root is the folder, relative to the repository, the templates were
	// loaded from; it prefixes the source paths of warnings.
	Root string
	// Guard is the controller's prune guard, to warn where it will hold
	// the change; nil means its defaults.
	Guard *guard.Options
	// Clusters, when set, limits the report to these clusters. Moves are
	// still paired over every cluster, so an object leaving a listed
	// cluster for another one is a move, not a deletion.
	Clusters []string
	// Rollouts are the head's RolloutPolicies: the report gives each its
	// wave plan.
	Rollouts []load.Rollout
}

// entry is one object that differs on one cluster, before formatting.
type entry struct {
	cluster    string
	key        workv1alpha1.ObjectKey
	change     Change
	base, head *unstructured.Unstructured
	// baseYAML and headYAML are the unredacted manifests.
	baseYAML, headYAML []byte
	// movedFrom/movedTo pair the two halves of a move; from is the object
	// on the cluster a moved object left.
	movedFrom, movedTo string
	from               *entry
}

// placement maps a cluster to its objects by key.
type placement map[string]map[workv1alpha1.ObjectKey]*unstructured.Unstructured

// Compare computes the difference between two renders: what each cluster
// receives at head compared with base.
func Compare(in Input) *Report {
	r := &Report{
		SchemaVersion: SchemaVersion,
		Base:          in.BaseRevision,
		Head:          in.HeadRevision,
		Clusters:      []Cluster{},
		Moves:         []Move{},
		Deletions:     []Deletion{},
		Warnings:      warnings(in.Head, in.Root),
		RenderErrors:  renderErrors(in.Head, in.Root),
		Unclaimed:     unclaimed(in.Head, in.Root),
		PruneHolds:    []PruneHold{},
		Waves:         []WavePlan{},
	}
	gopts := guard.DefaultOptions()
	if in.Guard != nil {
		gopts = *in.Guard
	}
	var covered map[string]map[workv1alpha1.ObjectKey]bool
	r.Orphaned, covered = orphaned(in.Head)
	base, head := index(in.Base), index(in.Head)
	var all [][]*entry
	for _, name := range clusterNames(base, head) {
		entries := dropOrphaned(compareCluster(name, base[name], head[name]), covered[name])
		if len(entries) == 0 {
			r.UnchangedClusters++
			continue
		}
		c := Cluster{Name: name, Replicas: sumReplicas(base[name], head[name])}
		r.Clusters = append(r.Clusters, c)
		all = append(all, entries)
	}
	r.PruneHolds = pruneHolds(base, head, gopts)
	r.Moves = pairMoves(all)
	for i := range r.Clusters {
		fillCluster(&r.Clusters[i], all[i])
	}
	r.Deletions = deletions(all)
	r.Waves = wavePlans(in, all)
	if len(in.Clusters) > 0 {
		r.only(in.Clusters, unchanged(base, head, all, in.Clusters))
	}
	r.Differs = len(r.Clusters) > 0 || len(r.Orphaned) > 0
	return r
}

// index maps each cluster of a render to its objects.
func index(res *render.Result) placement {
	p := placement{}
	if res == nil {
		return p
	}
	for _, w := range res.Works {
		objs := make(map[workv1alpha1.ObjectKey]*unstructured.Unstructured, len(w.Objects))
		for _, o := range w.Objects {
			objs[workv1alpha1.KeyOf(o)] = o
		}
		p[w.Cluster] = objs
	}
	return p
}

func clusterNames(a, b placement) []string {
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// compareCluster lists the objects that differ on one cluster, in key
// order.
func compareCluster(cluster string, base, head map[workv1alpha1.ObjectKey]*unstructured.Unstructured) []*entry {
	keys := make([]workv1alpha1.ObjectKey, 0, len(head))
	for k := range base {
		keys = append(keys, k)
	}
	for k := range head {
		if _, ok := base[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, cmpKey)
	var out []*entry
	for _, k := range keys {
		b, h := base[k], head[k]
		e := &entry{cluster: cluster, key: k, base: b, head: h}
		switch {
		case b == nil:
			e.change, e.headYAML = Added, manifest(h)
		case h == nil:
			e.change, e.baseYAML = Removed, manifest(b)
		case equalJSON(b.Object, h.Object):
			continue
		default:
			e.change, e.baseYAML, e.headYAML = Changed, manifest(b), manifest(h)
			if bytes.Equal(e.baseYAML, e.headYAML) {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// equalJSON compares two JSON-shaped values (what unstructured objects
// hold) several times faster than reflect.DeepEqual, which it falls back on
// for other types. An int64 and a float64 are unequal here; the caller then
// compares the rendered YAML.
func equalJSON(a, b any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok || !equalJSON(x, y) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !equalJSON(av[i], bv[i]) {
				return false
			}
		}
		return true
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case int64:
		bv, ok := b.(int64)
		return ok && av == bv
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case float64:
		bv, ok := b.(float64)
		return ok && av == bv
	case nil:
		return b == nil
	}
	return reflect.DeepEqual(a, b)
}

func cmpKey(a, b workv1alpha1.ObjectKey) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}

// manifest renders an object as YAML with sorted keys; an object that
// cannot be rendered (never the case for a render's output) shows the error.
func manifest(obj *unstructured.Unstructured) []byte {
	b, err := yaml.Marshal(obj.Object)
	if err != nil {
		return []byte("# cannot render this object as YAML: " + err.Error() + "\n")
	}
	return b
}

// sumReplicas adds up the workload replicas of a cluster on both sides; nil
// when neither side runs a workload there.
func sumReplicas(base, head map[workv1alpha1.ObjectKey]*unstructured.Unstructured) *Replicas {
	before, okB := sum(base)
	after, okA := sum(head)
	if !okB && !okA {
		return nil
	}
	return &Replicas{Before: before, After: after}
}

func sum(objs map[workv1alpha1.ObjectKey]*unstructured.Unstructured) (int64, bool) {
	var n int64
	found := false
	for _, o := range objs {
		if r, ok := replicas(o); ok {
			n += r
			found = true
		}
	}
	return n, found
}

// replicas is what a workload runs on its cluster: the final spec.replicas
// (after overrides), else the replicas the scheduler gave it.
func replicas(obj *unstructured.Unstructured) (int64, bool) {
	if v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas"); found {
		switch n := v.(type) {
		case int64:
			return n, true
		case int:
			return int64(n), true
		case float64:
			return int64(n), true
		}
	}
	if s, ok := obj.GetAnnotations()[workv1alpha1.AnnotationScheduledReplicas]; ok {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
	}
	return 0, false
}

// warnings lists the head render's problems.
func warnings(res *render.Result, root string) []Warning {
	out := []Warning{}
	if res == nil {
		return out
	}
	for _, b := range res.Bindings {
		src := ""
		if b.Template != nil {
			src = path.Join(root, b.Template.Source.Path)
			if b.Template.Source.Line > 0 {
				src += ":" + strconv.Itoa(b.Template.Source.Line)
			}
		}
		if b.ScheduleError != "" {
			msg := "scheduling failed: " + b.ScheduleError + "; it is placed nowhere"
			if b.KeptPrevious {
				msg = "scheduling failed: " + b.ScheduleError + "; the previous placement stays"
			}
			out = append(out, Warning{Source: src, Template: b.Key.String(), Message: msg})
		}
		for _, t := range b.Targets {
			if t.Error != "" && t.Failure == nil { // failures are RenderErrors
				out = append(out, Warning{Source: src, Template: b.Key.String(), Cluster: t.Cluster, Message: "not rendered: " + t.Error})
			}
		}
	}
	return out
}
