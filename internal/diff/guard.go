package diff

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/guard"
)

// PruneHold is a cluster where the controller's prune guard will hold the
// change: it deletes more of the cluster than the guard allows.
type PruneHold struct {
	Cluster string `json:"cluster"`
	// Removed of Total objects the cluster runs at base would be deleted.
	Removed int `json:"removed"`
	Total   int `json:"total"`
}

// pruneHolds lists, by cluster, where head deletes more of what a cluster
// runs at base than opts allows (the controller holds such a revision on a
// Ready member until a commit acknowledges it).
func pruneHolds(base, head placement, opts guard.Options) []PruneHold {
	out := []PruneHold{}
	for _, name := range clusterNames(base, head) {
		before := slices.Collect(mapKeys(base[name]))
		after := slices.Collect(mapKeys(head[name]))
		if h := guard.Check(before, after, opts); h != nil {
			out = append(out, PruneHold{Cluster: name, Removed: h.Removed, Total: h.Total})
		}
	}
	return out
}

func mapKeys(m map[workv1alpha1.ObjectKey]*unstructured.Unstructured) func(func(workv1alpha1.ObjectKey) bool) {
	return func(yield func(workv1alpha1.ObjectKey) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// pruneHoldNote is the line people read about the held clusters.
func pruneHoldNote(holds []PruneHold, name func(string) string) string {
	parts := make([]string, 0, len(holds))
	for _, h := range holds {
		parts = append(parts, fmt.Sprintf("%s (%d of %d objects)", name(h.Cluster), h.Removed, h.Total))
	}
	return fmt.Sprintf("The prune guard will hold this change on %s: it deletes more than the guard allows. "+
		"Merge with the commit trailer %s to apply it.", strings.Join(parts, ", "), name(guard.AllowTrailer+": true"))
}
