package render_test

import (
	"reflect"
	"testing"

	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
)

// TestHistoryWithEvictions: a failover that keeps the old copy (an
// eviction recorded in its annotations) is read twice by the controller's
// History, which gives what PreviousFromWorks gives. It lives here, by the
// eviction fixtures.
func TestHistoryWithEvictions(t *testing.T) {
	for _, purge := range []string{"Gracefully", "Never"} {
		_, moved := evictedPrimary(t, purge)
		h := &incremental.History{}
		for i := range 2 {
			got, want := h.Next(moved.Works), render.PreviousFromWorks(moved.Works)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, read %d: History differs from PreviousFromWorks", purge, i)
			}
			if pt := got.Templates[nginxKey]; pt == nil || len(pt.Evictions) == 0 {
				t.Fatalf("%s: no eviction in the history: %+v", purge, pt)
			}
		}
	}
}
