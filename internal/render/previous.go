package render

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/match"
	"github.com/propagit/propagit/internal/schedule"
)

// Previous is the placement of an earlier render: the history Karmada's
// results depend on (§0 of the semantics). The zero value is a first render.
type Previous struct {
	Templates map[workv1alpha1.ObjectKey]*PreviousTemplate `json:"templates,omitempty"`
	// Recorded holds every object last recorded, dependencies included,
	// by source template (its workv1alpha1.AnnotationTemplate) and cluster:
	// what a template that fails to render or loses its policy keeps, and
	// what a template removed from Git leaves behind.
	Recorded map[workv1alpha1.ObjectKey]map[string]*unstructured.Unstructured `json:"-"`
}

// PreviousTemplate is the earlier placement of one template.
type PreviousTemplate struct {
	Claim     *match.Claim      `json:"claim,omitempty"`
	Placement schedule.Previous `json:"placement"`
	Evictions []Eviction        `json:"evictions,omitempty"`
	// Objects are the copies last rendered, by cluster: a cluster the
	// template is evicted from keeps its copy frozen, and a copy that is
	// rendered again unchanged keeps the health its cluster reported.
	Objects map[string]*unstructured.Unstructured `json:"-"`
	// preserved is set when one of Objects carries labels statePreservation
	// kept (workv1alpha1.AnnotationPreservedLabels).
	preserved bool
}

// PendingGraceful reports whether some template has a Gracefully eviction
// pending: one that ends once its new placement is healthy.
func (p *Previous) PendingGraceful() bool {
	if p == nil {
		return false
	}
	for _, t := range p.Templates {
		for _, e := range t.Evictions {
			if e.PurgeMode == policyv1alpha1.PurgeGracefully {
				return true
			}
		}
	}
	return false
}

// Lookup returns the history of key, or nil.
func (p *Previous) Lookup(k workv1alpha1.ObjectKey) *PreviousTemplate { return p.lookup(k) }

// claim is the policy claim the template was placed under, nil if none.
func (t *PreviousTemplate) claim() *match.Claim {
	if t == nil {
		return nil
	}
	return t.Claim
}

// lookup returns the history of key, or nil.
func (p *Previous) lookup(k workv1alpha1.ObjectKey) *PreviousTemplate {
	if p == nil || p.Templates == nil {
		return nil
	}
	return p.Templates[k]
}

// PreviousFromWorks rebuilds the previous placement from rendered Works: each
// object names its template, its claiming policy and its scheduled replicas
// in the annotations stamp writes. Dependencies are skipped, except in
// Recorded, which holds every object.
func PreviousFromWorks(works []Work) *Previous {
	prev := &Previous{Templates: map[workv1alpha1.ObjectKey]*PreviousTemplate{},
		Recorded: map[workv1alpha1.ObjectKey]map[string]*unstructured.Unstructured{}}
	// Render shares an object between the clusters that receive it
	// unchanged: its annotations are read once.
	read := map[*unstructured.Unstructured]*Stamp{}
	for _, w := range works {
		for _, obj := range w.Objects {
			st := read[obj]
			if st == nil {
				st = readStamp(obj)
				read[obj] = st
			}
			if !st.ok {
				continue
			}
			prev.Add(w.Cluster, obj, st)
		}
	}
	for _, t := range prev.Templates {
		SortPlacement(t)
	}
	return prev
}

// Stamp is what the annotations stamp writes say of an object (ReadStamp).
type Stamp struct {
	// template is the object's template; ok is false when the annotation
	// does not parse (the object is skipped).
	template workv1alpha1.ObjectKey
	ok       bool
	// dependency: a dependency only (no policy claims it), not a
	// template's own copy.
	dependency bool
	claim      *match.Claim
	replicas   int32
	affinity   string
	// eviction is set on a kept old copy (its Cluster left empty).
	eviction *Eviction
	// preserved: the copy carries labels statePreservation kept.
	preserved bool
}

// ReadStamp reads the annotations stamp wrote on obj.
func ReadStamp(obj *unstructured.Unstructured) *Stamp { return readStamp(obj) }

// Template returns the key of the object's template; false when the object
// names none (it is no template's copy).
func (st *Stamp) Template() (workv1alpha1.ObjectKey, bool) { return st.template, st.ok }

// Add records obj, of stamp st, as last recorded on cluster, and as its
// template's previous placement there. Call SortPlacement on each template
// once all are added.
func (p *Previous) Add(cluster string, obj *unstructured.Unstructured, st *Stamp) {
	addRecorded(p, cluster, obj, st)
	addPrevious(p, cluster, obj, st)
}

// SortPlacement orders a template's previous clusters by name.
func SortPlacement(t *PreviousTemplate) {
	slices.SortFunc(t.Placement.Clusters, func(a, b schedule.TargetCluster) int { return strings.Compare(a.Name, b.Name) })
}

func readStamp(obj *unstructured.Unstructured) *Stamp {
	ann := func(key string) string { return annotation(obj, key) }
	key, err := workv1alpha1.ParseKey(ann(workv1alpha1.AnnotationTemplate))
	if err != nil {
		return &Stamp{}
	}
	replicas, _ := strconv.Atoi(ann(workv1alpha1.AnnotationScheduledReplicas))
	st := &Stamp{template: key, ok: true, claim: claimOf(ann), replicas: int32(replicas), affinity: ann(workv1alpha1.AnnotationAffinityName),
		dependency: ann(workv1alpha1.AnnotationDependencyOf) != "" && ann(workv1alpha1.AnnotationPPName) == "" && ann(workv1alpha1.AnnotationCPPName) == "",
		preserved:  ann(workv1alpha1.AnnotationPreservedLabels) != ""}
	if e, ok := parseEviction("", ann, int32(replicas)); ok {
		st.eviction = &e
	}
	return st
}

func addRecorded(prev *Previous, cluster string, obj *unstructured.Unstructured, st *Stamp) {
	if prev.Recorded[st.template] == nil {
		prev.Recorded[st.template] = map[string]*unstructured.Unstructured{}
	}
	prev.Recorded[st.template][cluster] = obj
}

// recorded returns the objects last recorded for key, by cluster, or nil.
func (p *Previous) recorded(k workv1alpha1.ObjectKey) map[string]*unstructured.Unstructured {
	if p == nil {
		return nil
	}
	return p.Recorded[k]
}

func addPrevious(prev *Previous, cluster string, obj *unstructured.Unstructured, st *Stamp) {
	if st.dependency {
		return
	}
	t := prev.Templates[st.template]
	if t == nil {
		t = &PreviousTemplate{Claim: st.claimCopy(), Objects: map[string]*unstructured.Unstructured{}}
		prev.Templates[st.template] = t
	}
	t.Objects[cluster] = obj
	t.preserved = t.preserved || st.preserved
	if st.eviction != nil {
		e := *st.eviction
		e.Cluster = cluster
		t.Evictions = append(t.Evictions, e)
		return
	}
	// The placement's copies speak for the claim and the affinity term, not
	// a frozen old copy.
	t.Claim = st.claimCopy()
	t.Placement.AffinityName = st.affinity
	t.Placement.Clusters = append(t.Placement.Clusters, schedule.TargetCluster{Name: cluster, Replicas: st.replicas})
}

// claimCopy returns the claim, a copy of its own for each template.
func (st *Stamp) claimCopy() *match.Claim {
	if st.claim == nil {
		return nil
	}
	c := *st.claim
	return &c
}

// claimOf is the policy claim an object's annotations record, or nil.
func claimOf(ann func(string) string) *match.Claim {
	switch {
	case ann(workv1alpha1.AnnotationCPPName) != "":
		return &match.Claim{ClusterScoped: true, Name: ann(workv1alpha1.AnnotationCPPName)}
	case ann(workv1alpha1.AnnotationPPName) != "":
		return &match.Claim{Namespace: ann(workv1alpha1.AnnotationPPNamespace), Name: ann(workv1alpha1.AnnotationPPName)}
	}
	return nil
}

// parseEviction reads the eviction annotations of a kept old copy.
func parseEviction(cluster string, ann func(string) string, replicas int32) (Eviction, bool) {
	since, err := time.Parse(time.RFC3339, ann(workv1alpha1.AnnotationEvictedAt))
	if err != nil {
		return Eviction{}, false
	}
	e := Eviction{Cluster: cluster, Since: since, PurgeMode: ann(workv1alpha1.AnnotationPurgeMode), Replicas: replicas}
	if until, err := time.Parse(time.RFC3339, ann(workv1alpha1.AnnotationEvictedUntil)); err == nil {
		e.Until = until
	}
	e.Reason = ann(workv1alpha1.AnnotationEvictedReason)
	return e, true
}

// annotation returns obj's annotation key, "" when it has none, without
// copying every annotation as GetAnnotations does: the history of a render
// reads a few annotations of every object it recorded.
func annotation(obj *unstructured.Unstructured, key string) string {
	md, _ := obj.Object["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	v, _ := ann[key].(string)
	return v
}
