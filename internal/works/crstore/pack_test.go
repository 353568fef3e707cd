package crstore

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// TestPackKeepsLargeStatusesWhole pins that a status too large for one
// object is stored compressed and read back equal, a small one is left as
// it is, and a packed record that expands without bound is refused.
func TestPackKeepsLargeStatusesWhole(t *testing.T) {
	st := &workv1alpha1.WorkStatus{AppliedRevision: "r1"}
	for i := range 5000 {
		ref := workv1alpha1.ObjectRef{ObjectKey: workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "app", Name: fmt.Sprintf("cm-%05d", i)}, Version: "v1"}
		st.Inventory = append(st.Inventory, ref)
		st.Objects = append(st.Objects, workv1alpha1.ObjectResult{ObjectRef: ref, Action: "Created", Health: "Current"})
	}
	packed, err := pack(st)
	if err != nil {
		t.Fatal(err)
	}
	if packed.Objects != nil || packed.Inventory != nil || len(packed.Packed) == 0 || len(packed.Packed) > 100<<10 {
		t.Fatalf("5,000 objects packed into %d bytes (objects %d, inventory %d)", len(packed.Packed), len(packed.Objects), len(packed.Inventory))
	}
	back, err := unpack(packed)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	small := &workv1alpha1.WorkStatus{Inventory: st.Inventory[:3], Objects: st.Objects[:3]}
	if got, err := pack(small); err != nil || got != small {
		t.Errorf("a small status was packed (err %v)", err)
	}

	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, _ = zw.Write([]byte(`{"objects":[` + strings.Repeat(" ", maxUnpacked+1)))
	_ = zw.Close()
	if _, err := unpack(&workv1alpha1.WorkStatus{Packed: bomb.Bytes()}); err == nil || !strings.Contains(err.Error(), "expands past") {
		t.Errorf("a packed record expanding past the bound: err %v", err)
	}
}
