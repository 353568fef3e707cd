package workstest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStoreBehavesAsTheStores: the fake records as the real stores do —
// an unchanged Work is not rewritten, a cluster left out is removed, the
// newest revision is the last that changed anything — and passes the
// checks every store passes.
func TestStoreBehavesAsTheStores(t *testing.T) {
	ctx := Ctx(t)
	s := NewStore()
	for _, step := range []struct {
		rev         string
		works       int
		wantChanged []string
		wantNewest  string
	}{
		{"rev1", 3, []string{"c0", "c1", "c2"}, "rev1"},
		{"rev2", 3, nil, "rev1"},
		{"rev3", 2, []string{"c2"}, "rev3"},
	} {
		changed, err := s.Put(ctx, step.rev, Fleet(step.works, 1, step.rev, "a"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(step.wantChanged, changed); diff != "" {
			t.Errorf("Put %s: changed (-want +got):\n%s", step.rev, diff)
		}
		if newest, _ := s.NewestRevision(ctx); newest != step.wantNewest {
			t.Errorf("Put %s: newest %q, want %q", step.rev, newest, step.wantNewest)
		}
	}
	if ws, _ := s.List(ctx); len(ws) != 2 || ws[0].Spec.Cluster != "c0" || ws[0].Spec.SourceRevision != "rev1" {
		t.Errorf("List = %v, want c0 and c1 at rev1 (unchanged since)", ws)
	}
	if w, _ := s.ListCluster(ctx, "c2"); w != nil {
		t.Errorf("ListCluster(c2) = %v, want nil once removed", w)
	}
	if err := s.PutStatus(ctx, "c0", Status("rev1", "True", T0)); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.GetStatus(ctx, "c0"); st.AppliedRevision != "rev1" || s.StatusWrites() != 1 {
		t.Errorf("GetStatus(c0) = %+v after %d writes", st, s.StatusWrites())
	}
	if st, _ := s.GetStatus(ctx, "c1"); st == nil || st.AppliedRevision != "" {
		t.Errorf("GetStatus(c1) = %+v, want a zero status", st)
	}
	CheckAnnotationSteps(t, NewStore())
}
