package deliver

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
