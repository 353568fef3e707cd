package gitstore

import (
	"testing"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works/workstest"
)

// TestReaderFollowsContentBroughtBack has a Work go back to what an older
// commit held (here its annotations, at one source revision): a second
// store, which keeps only the tip it last read, must still read it, over
// go-git's file:// server as over a real Git server.
func TestReaderFollowsContentBroughtBack(t *testing.T) {
	eachRemote(t, func(t *testing.T, r *remote) {
		ctx := ctxT(t)
		writer, reader := r.store(t), r.store(t)
		for i, ready := range []string{"True", "Unknown", "True", "Unknown"} {
			if _, err := writer.Put(ctx, "rev1", workstest.Annotated("rev1", ready)); err != nil {
				t.Fatal(err)
			}
			ws, err := reader.List(ctx)
			if err != nil {
				t.Fatalf("put %d: List: %v", i, err)
			}
			if got := ws[0].Annotations[workv1alpha1.AnnotationClusterReady]; got != ready {
				t.Errorf("put %d: List reads Ready %q, want %q", i, got, ready)
			}
			w, err := reader.ListCluster(ctx, "c0")
			if err != nil {
				t.Fatalf("put %d: ListCluster: %v", i, err)
			}
			if got := w.Annotations[workv1alpha1.AnnotationClusterReady]; got != ready {
				t.Errorf("put %d: ListCluster reads Ready %q, want %q", i, got, ready)
			}
		}
	})
}
