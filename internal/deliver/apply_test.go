package deliver

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
)

func workOf(t *testing.T, manifests ...string) *workv1alpha1.Work {
	t.Helper()
	w := &workv1alpha1.Work{}
	for _, m := range manifests {
		w.Spec.Manifests = append(w.Spec.Manifests, runtime.RawExtension{Raw: []byte(m)})
	}
	return w
}

func cm(name, value string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"ns"},"data":{"k":%q}}`, name, value)
}

func ref(name string) workv1alpha1.ObjectRef {
	return workv1alpha1.ObjectRef{ObjectKey: workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "ns", Name: name}, Version: "v1"}
}

func TestChangesListsOnlyWhatDiffers(t *testing.T) {
	prev := workOf(t, cm("a", "1"), cm("b", "1"), cm("c", "1"))
	next := workOf(t, cm("a", "1"), cm("b", "2"), cm("d", "1"))
	objs, err := workv1alpha1.Objects(next)
	if err != nil {
		t.Fatal(err)
	}
	// The inventory also holds e, a prune that failed before: it is retried.
	changed, removed := changes(prev, next, objs, []workv1alpha1.ObjectRef{ref("a"), ref("b"), ref("c"), ref("e")})
	var names []string
	for _, o := range changed {
		names = append(names, o.GetName())
	}
	if !slices.Equal(names, []string{"b", "d"}) {
		t.Errorf("changed = %v, want [b d]", names)
	}
	if !slices.Equal(removed, []workv1alpha1.ObjectRef{ref("c"), ref("e")}) {
		t.Errorf("removed = %v, want c and e", removed)
	}
}

func TestMergeResultsKeepsUntouchedHealth(t *testing.T) {
	prev := []workv1alpha1.ObjectResult{
		{ObjectRef: ref("a"), Action: workv1alpha1.ActionUnchanged, Health: workv1alpha1.HealthCurrent},
		{ObjectRef: ref("b"), Action: workv1alpha1.ActionUnchanged, Health: workv1alpha1.HealthCurrent},
		{ObjectRef: ref("c"), Action: workv1alpha1.ActionUnchanged, Health: workv1alpha1.HealthCurrent},
	}
	res := &apply.Result{
		Objects: []workv1alpha1.ObjectResult{
			{ObjectRef: ref("b"), Action: workv1alpha1.ActionConfigured},
			{ObjectRef: ref("c"), Action: workv1alpha1.ActionPruned},
			{ObjectRef: ref("d"), Action: workv1alpha1.ActionFailed, Message: "denied"},
		},
		Inventory: []workv1alpha1.ObjectRef{ref("a"), ref("b")},
	}
	got := mergeResults(prev, res)
	want := []workv1alpha1.ObjectResult{
		{ObjectRef: ref("a"), Action: workv1alpha1.ActionUnchanged, Health: workv1alpha1.HealthCurrent},
		{ObjectRef: ref("b"), Action: workv1alpha1.ActionConfigured},
		{ObjectRef: ref("d"), Action: workv1alpha1.ActionFailed, Message: "denied"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("merged:\n got %+v\nwant %+v", got, want)
	}
}
