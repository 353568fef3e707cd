package guard

import (
	"fmt"
	"testing"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

func keys(names ...string) []workv1alpha1.ObjectKey {
	out := make([]workv1alpha1.ObjectKey, 0, len(names))
	for _, n := range names {
		out = append(out, workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "app", Name: n})
	}
	return out
}

func n(count int) []string {
	out := make([]string, count)
	for i := range out {
		out[i] = fmt.Sprint("cm-", i)
	}
	return out
}

func TestCheck(t *testing.T) {
	ten := n(10)
	tests := []struct {
		name          string
		before, after []string
		max           int
		wantRemoved   int // 0: not held
	}{
		{name: "nothing removed", before: ten, after: ten, max: 50},
		{name: "half removed is allowed at 50%", before: ten, after: ten[:5], max: 50},
		{name: "80% removed is held", before: ten, after: ten[:2], max: 50, wantRemoved: 8},
		{name: "emptying a member is held whatever the share", before: n(1), after: nil, max: 99, wantRemoved: 1},
		{name: "added objects do not offset deletions", before: ten, after: append(n(2), "new-1", "new-2", "new-3", "new-4", "new-5", "new-6"), max: 50, wantRemoved: 8},
		{name: "an empty member has nothing to guard", before: nil, after: ten, max: 0},
		{name: "100% turns the guard off", before: ten, after: nil, max: 100},
		{name: "0% holds any deletion", before: ten, after: ten[1:], max: 0, wantRemoved: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Check(keys(tt.before...), keys(tt.after...), Options{MaxPercent: tt.max})
			switch {
			case tt.wantRemoved == 0 && h != nil:
				t.Fatalf("held (%s), want allowed", h)
			case tt.wantRemoved > 0 && h == nil:
				t.Fatalf("allowed, want held with %d removed", tt.wantRemoved)
			case h != nil && (h.Removed != tt.wantRemoved || h.Total != len(tt.before)):
				t.Fatalf("held %d of %d, want %d of %d", h.Removed, h.Total, tt.wantRemoved, len(tt.before))
			}
		})
	}
}

func TestAllowed(t *testing.T) {
	for msg, want := range map[string]bool{
		"remove the demo app\n\nPropagit-Allow-Prune: true\n":                true,
		"remove the demo app\n\npropagit-allow-prune: TRUE":                  true,
		"remove the demo app\n\nSigned-off-by: a\nPropagit-Allow-Prune:true": true,
		"remove the demo app":                                     false,
		"remove the demo app\n\nPropagit-Allow-Prune: false":      false,
		"remove the demo app\n\nPropagit-Allow-Prune: yes please": false,
		"Propagit-Allow-Prune-Not: true":                          false,
		// Only the trailer block counts: the last paragraph, every line a
		// trailer (or a continuation), never the subject.
		"Propagit-Allow-Prune: true": false,
		"Merge pull request #7 from shop/cleanup\n\nThe guard asked for\nPropagit-Allow-Prune: true\nso here it is, quoted in the body.\n\nSigned-off-by: a <a@example.com>\n": false,
		"Merge pull request #7 from shop/cleanup\n\nPropagit-Allow-Prune: true\n\nMore text after it.":                                                                         false,
		"Merge pull request #7 from shop/cleanup\n\nbody\n\nReviewed-by: b\n  who read it twice\nPropagit-Allow-Prune: true\r\n\n\n":                                           true,
	} {
		if got := Allowed(msg); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", msg, got, want)
		}
	}
}
