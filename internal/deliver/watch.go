package deliver

import (
	"maps"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// watcher tells its Syncer within moments when an object propagit applied
// is changed or deleted on the member by someone else, so drift is
// corrected in seconds instead of at the next periodic check. It watches
// object metadata only, one informer per kind and namespace of the
// inventory, filtered by propagit's managed label: never whole-cluster
// lists, never object bodies.
type watcher struct {
	client metadata.Interface
	mapper meta.RESTMapper
	own    string // propagit's field manager
	log    logr.Logger
	// suspect is called with an object that looks changed by someone else
	// (drift true), or whose status changed (drift false: its health may
	// have).
	suspect func(r workv1alpha1.ObjectRef, drift bool)

	mu        sync.Mutex
	informers map[watchKey]*informer
	// watched is the inventory set last watched: set returns at once when
	// it is handed the same one, as on every sync of an unchanged Work.
	watched []workv1alpha1.ObjectRef
	// mappings are the resources of the kinds mapped so far: a RESTMapper
	// lookup costs tens of microseconds, and an inventory of thousands
	// asked it for every entry on every sync. Only kinds the member
	// serves are kept; a kind's resource name and scope do not change
	// while it is served. Only set uses it.
	mappings map[schema.GroupVersionKind]mapping
}

// mapping is a kind's resource and whether it is namespaced.
type mapping struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

// watchKey is one resource in one namespace ("" for cluster-scoped).
type watchKey struct {
	gvr       schema.GroupVersionResource
	namespace string
}

type informer struct {
	stop chan struct{}
	// refs are the inventory entries of this kind and namespace, by name.
	refs map[string]workv1alpha1.ObjectRef
}

func newWatcher(cfg *rest.Config, mapper meta.RESTMapper, own string, log logr.Logger, suspect func(workv1alpha1.ObjectRef, bool)) (*watcher, error) {
	c, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &watcher{client: c, mapper: mapper, own: own, log: log, suspect: suspect, informers: map[watchKey]*informer{},
		mappings: map[schema.GroupVersionKind]mapping{}}, nil
}

// set watches exactly the kinds and namespaces of inventory: informers are
// started for new ones and stopped for those no longer in it.
func (w *watcher) set(inventory []workv1alpha1.ObjectRef) {
	w.mu.Lock()
	same := w.watched != nil && slices.Equal(w.watched, inventory)
	w.mu.Unlock()
	if same {
		return
	}
	want := map[watchKey]map[string]workv1alpha1.ObjectRef{}
	unmapped := false
	for _, r := range inventory {
		k, ok := w.keyOf(r)
		if !ok {
			unmapped = true
			continue
		}
		if want[k] == nil {
			want[k] = map[string]workv1alpha1.ObjectRef{}
		}
		want[k][r.Name] = r
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// A kind the member does not serve yet (its CRD comes later) is
	// looked up again on the next set.
	w.watched = nil
	if !unmapped {
		w.watched = slices.Clone(inventory)
	}
	for k, inf := range w.informers {
		if _, ok := want[k]; !ok {
			close(inf.stop)
			delete(w.informers, k)
		}
	}
	for k, refs := range want {
		if inf, ok := w.informers[k]; ok {
			inf.refs = refs
			continue
		}
		w.informers[k] = w.start(k, refs)
	}
}

// keyOf maps r to its resource; kinds the member does not serve are not
// watched (the next apply reports them).
func (w *watcher) keyOf(r workv1alpha1.ObjectRef) (watchKey, bool) {
	gvk := r.GroupVersionKind()
	m, ok := w.mappings[gvk]
	if !ok {
		rm, err := w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return watchKey{}, false
		}
		m = mapping{gvr: rm.Resource, namespaced: rm.Scope.Name() == meta.RESTScopeNameNamespace}
		w.mappings[gvk] = m
	}
	k := watchKey{gvr: m.gvr}
	if m.namespaced {
		k.namespace = r.Namespace
	}
	return k, true
}

func (w *watcher) start(k watchKey, refs map[string]workv1alpha1.ObjectRef) *informer {
	inf := &informer{stop: make(chan struct{}), refs: refs}
	selector := func(o *metav1.ListOptions) { o.LabelSelector = workv1alpha1.LabelManaged + "=true" }
	si := metadatainformer.NewFilteredMetadataInformer(w.client, k.gvr, k.namespace, 0, cache.Indexers{}, selector).Informer()
	_, _ = si.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			o, n := asMeta(oldObj), asMeta(newObj)
			switch {
			case o == nil || n == nil || o.ResourceVersion == n.ResourceVersion:
			case w.changedByOther(o, n):
				w.report(inf, n.Name, true)
			default:
				w.report(inf, n.Name, false)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if m := asMeta(obj); m != nil {
				w.report(inf, m.Name, true)
			}
		},
	})
	_ = si.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		w.log.V(1).Info("drift watch failed; the periodic check still runs", "resource", k.gvr.String(), "namespace", k.namespace, "error", err.Error())
	})
	go si.Run(inf.stop)
	return inf
}

// report passes an inventory object on to the Syncer.
func (w *watcher) report(inf *informer, name string, drift bool) {
	w.mu.Lock()
	r, ok := inf.refs[name]
	w.mu.Unlock()
	if ok {
		w.suspect(r, drift)
	}
}

// close stops every informer.
func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watched = nil
	for k, inf := range w.informers {
		close(inf.stop)
		delete(w.informers, k)
	}
}

func asMeta(obj any) *metav1.PartialObjectMetadata {
	m, _ := obj.(*metav1.PartialObjectMetadata)
	return m
}

// changedByOther reports whether an update may be drift: what it changed
// is the spec (generation) or the labels and annotations, or anything for
// kinds without a generation (ConfigMaps), and the last writer of the main
// resource was not propagit. Status updates and propagit's own applies are
// not drift.
func (w *watcher) changedByOther(o, n *metav1.PartialObjectMetadata) bool {
	changed := o.Generation != n.Generation ||
		(n.Generation == 0 && o.ResourceVersion != n.ResourceVersion) ||
		!maps.Equal(o.Labels, n.Labels) || !maps.Equal(o.Annotations, n.Annotations)
	if !changed {
		return false
	}
	var ours, theirs metav1.Time
	for _, e := range n.ManagedFields {
		if e.Time == nil || e.Subresource != "" {
			continue
		}
		if e.Manager == w.own {
			if ours.Before(e.Time) {
				ours = *e.Time
			}
		} else if theirs.Before(e.Time) {
			theirs = *e.Time
		}
	}
	// Times have a resolution of one second: a tie may be someone else.
	return !theirs.Before(&ours) && !theirs.IsZero()
}
