package crstore

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// packAbove is the size of Inventory and Objects, encoded, from which a
// status record keeps them gzip-compressed: a Work custom resource must
// stay under etcd's request limit (1.5 MiB by default) with its status.
const packAbove = 256 << 10

// maxUnpacked bounds what a packed status may expand to, so a hostile or
// broken record cannot exhaust memory.
const maxUnpacked = 64 << 20

type packedLists struct {
	Inventory []workv1alpha1.ObjectRef    `json:"inventory,omitempty"`
	Objects   []workv1alpha1.ObjectResult `json:"objects,omitempty"`
}

// pack returns st with Inventory and Objects compressed into Packed when
// they are larger than packAbove; st itself otherwise.
func pack(st *workv1alpha1.WorkStatus) (*workv1alpha1.WorkStatus, error) {
	raw, err := json.Marshal(packedLists{Inventory: st.Inventory, Objects: st.Objects})
	if err != nil {
		return nil, err
	}
	if len(raw) <= packAbove {
		return st, nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	out := st.DeepCopy()
	out.Inventory, out.Objects, out.Packed = nil, nil, buf.Bytes()
	return out, nil
}

// unpack returns st with Packed expanded back into Inventory and Objects.
func unpack(st *workv1alpha1.WorkStatus) (*workv1alpha1.WorkStatus, error) {
	if len(st.Packed) == 0 {
		return st, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(st.Packed))
	if err != nil {
		return nil, fmt.Errorf("unreadable packed status: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxUnpacked+1))
	if err != nil {
		return nil, fmt.Errorf("unreadable packed status: %w", err)
	}
	if len(raw) > maxUnpacked {
		return nil, fmt.Errorf("packed status expands past %d bytes", maxUnpacked)
	}
	var l packedLists
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("unreadable packed status: %w", err)
	}
	out := st.DeepCopy()
	out.Inventory, out.Objects, out.Packed = l.Inventory, l.Objects, nil
	return out, nil
}
