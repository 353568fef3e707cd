package deliver

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metadatafake "k8s.io/client-go/metadata/fake"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

func TestChangedByOther(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Second))
	entry := func(manager, sub string, at metav1.Time) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Subresource: sub, Time: &at}
	}
	obj := func(gen int64, rv string, entries ...metav1.ManagedFieldsEntry) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Generation: gen, ResourceVersion: rv, ManagedFields: entries}}
	}
	w := &watcher{own: "propagit"}
	for _, tc := range []struct {
		name     string
		old, new *metav1.PartialObjectMetadata
		want     bool
	}{
		{"spec edited by kubectl after propagit", obj(1, "1", entry("propagit", "", t0)),
			obj(2, "2", entry("propagit", "", t0), entry("kubectl-edit", "", t1)), true},
		{"propagit's own apply", obj(1, "1", entry("propagit", "", t0), entry("kubectl-edit", "", t0)),
			obj(2, "2", entry("propagit", "", t1), entry("kubectl-edit", "", t0)), false},
		{"status update only", obj(1, "1", entry("propagit", "", t0)),
			obj(1, "2", entry("propagit", "", t0), entry("kube-controller-manager", "status", t1)), false},
		{"ConfigMap edited (no generation)", obj(0, "1", entry("propagit", "", t0)),
			obj(0, "2", entry("propagit", "", t0), entry("kubectl-edit", "", t1)), true},
		{"same second: may be someone else", obj(1, "1", entry("propagit", "", t0)),
			obj(2, "2", entry("propagit", "", t0), entry("kubectl-edit", "", t0)), true},
	} {
		if got := w.changedByOther(tc.old, tc.new); got != tc.want {
			t.Errorf("%s: changedByOther = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// countingMapper counts the RESTMapping lookups it answers.
type countingMapper struct {
	meta.RESTMapper
	lookups int
}

func (m *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.lookups++
	return m.RESTMapper.RESTMapping(gk, versions...)
}

// TestWatcherSetMapsEachKindOnce: an inventory of many objects of one kind
// costs one mapper lookup, the same inventory again costs none, and a kind
// the member does not serve yet is looked up again on the next set (its
// CRD may have come meanwhile).
func TestWatcherSetMapsEachKindOnce(t *testing.T) {
	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	rm := meta.NewDefaultRESTMapper(nil)
	rm.Add(cmGVK, meta.RESTScopeNamespace)
	mapper := &countingMapper{RESTMapper: rm}
	client := metadatafake.NewSimpleMetadataClient(runtime.NewScheme())
	w := &watcher{client: client, mapper: mapper, own: "propagit", log: logr.Discard(), suspect: func(workv1alpha1.ObjectRef, bool) {},
		informers: map[watchKey]*informer{}, mappings: map[schema.GroupVersionKind]mapping{}}
	defer w.close()
	var inv []workv1alpha1.ObjectRef
	for i := range 100 {
		inv = append(inv, ref(fmt.Sprintf("cm-%d", i)))
	}
	w.set(inv)
	w.set(slices.Clone(inv))
	if mapper.lookups != 1 {
		t.Errorf("%d mapper lookups for 100 ConfigMaps set twice, want 1", mapper.lookups)
	}
	if len(w.informers) != 1 {
		t.Errorf("%d informers, want 1 (ConfigMaps in ns)", len(w.informers))
	}
	widget := workv1alpha1.ObjectRef{ObjectKey: workv1alpha1.ObjectKey{Group: "example.com", Kind: "Widget", Namespace: "ns", Name: "w"}, Version: "v1"}
	withWidget := append(slices.Clone(inv), widget)
	w.set(withWidget)
	before := mapper.lookups
	w.set(withWidget)
	if mapper.lookups != before+1 {
		t.Errorf("the unserved kind was looked up %d times on the next set, want once", mapper.lookups-before)
	}
	rm.Add(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, meta.RESTScopeNamespace)
	w.set(withWidget)
	if len(w.informers) != 2 {
		t.Errorf("%d informers once the Widget kind is served, want 2", len(w.informers))
	}
}
