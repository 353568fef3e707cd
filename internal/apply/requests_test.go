package apply

import (
	"fmt"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// TestApplyRequestCounts pins the cost of an apply in API requests: one per
// object on a first apply into a new namespace, one LIST per kind and
// namespace when nothing changed, one per changed object.
func TestApplyRequestCounts(t *testing.T) {
	var requests atomic.Int64
	m, err := NewForConfig(countedConfig(&requests), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	ns := uniqueNS("requests")
	var objs []*unstructured.Unstructured
	for i := range 10 {
		objs = append(objs, configMap(t, ns, fmt.Sprintf("c%d", i), "1"))
	}
	// Warm the REST mapper so discovery is not counted.
	if _, err := m.client.IsObjectNamespaced(objs[0]); err != nil {
		t.Fatal(err)
	}

	count := func(desired []*unstructured.Unstructured, inv *Result) (*Result, int64) {
		t.Helper()
		requests.Store(0)
		prev := inventoryOrNil(inv)
		res := mustApply(t, m, desired, prev)
		if res.Failed != 0 {
			t.Fatalf("failed objects: %+v", res.Objects)
		}
		return res, requests.Load()
	}
	res, n := count(objs, nil)
	if want := int64(2 + len(objs)); n != want { // namespace GET + create, one apply each
		t.Errorf("first apply: %d requests, want %d", n, want)
	}
	res, n = count(objs, res)
	if want := int64(2); n != want { // namespace GET, one LIST
		t.Errorf("unchanged re-apply: %d requests, want %d", n, want)
	}
	objs[3] = configMap(t, ns, "c3", "2")
	_, n = count(objs, res)
	if want := int64(3); n != want { // namespace GET, one LIST, one apply
		t.Errorf("re-apply with one change: %d requests, want %d", n, want)
	}
}

func inventoryOrNil(res *Result) []workv1alpha1.ObjectRef {
	if res == nil {
		return nil
	}
	return res.Inventory
}
