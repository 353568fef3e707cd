package pull

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// benchObjects is how many ConfigMaps each cluster's Work holds.
const benchObjects = 5

// workBranch returns the Works of n clusters, c-000 … c-<n-1>, each with
// benchObjects ConfigMaps.
func workBranch(tb testing.TB, n int) []*workv1alpha1.Work {
	var ws []*workv1alpha1.Work
	for i := range n {
		name := fmt.Sprintf("c-%03d", i)
		var objs []map[string]any
		for j := range benchObjects {
			objs = append(objs, managedConfigMap("bench", fmt.Sprintf("cm-%d", j), fmt.Sprintf("%s-%d", name, j)))
		}
		ws = append(ws, handWork(tb, name, "rev-1", workv1alpha1.FormatVersion, objs...))
	}
	return ws
}

// writeStatusRefs writes one status commit and ref per cluster of ws
// straight into the bare repository dir, as n agents would have pushed
// them.
func writeStatusRefs(tb testing.TB, dir string, ws []*workv1alpha1.Work) {
	tb.Helper()
	repo, err := git.PlainOpen(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, w := range ws {
		content := fmt.Sprintf("appliedRevision: rev-1\nagentVersion: %s\n# %s\n", agentVersion, w.Spec.Cluster)
		blob, err := gitrepo.StoreBlob(repo.Storer, []byte(content))
		if err != nil {
			tb.Fatal(err)
		}
		tree := &object.Tree{Entries: []object.TreeEntry{{Name: gitstore.StatusFile, Mode: filemode.Regular, Hash: blob}}}
		th, err := gitrepo.WriteObject(repo.Storer, tree)
		if err != nil {
			tb.Fatal(err)
		}
		sig := object.Signature{Name: "agent", Email: "agent@propagit.invalid", When: time.Unix(1_800_000_000, 0)}
		commit := &object.Commit{Author: sig, Committer: sig, TreeHash: th,
			Message: fmt.Sprintf("propagit: status %s\n\nApplied-Revision: rev-1\n", w.Spec.Cluster)}
		ch, err := gitrepo.WriteObject(repo.Storer, commit)
		if err != nil {
			tb.Fatal(err)
		}
		if err := repo.Storer.SetReference(plumbing.NewHashReference(gitstore.StatusRef(w.Spec.Cluster), ch)); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkPullAgentSteadyState is one poll of an agent whose Work has not
// changed: GitStore.ListCluster of cluster c-000 against a work branch of 10
// or 200 clusters over smart HTTP, with each cluster's status ref either in
// the same repository (the default) or in a separate status repository
// (GitOptions.StatusURL). Reported per poll: requests served and bytes the
// server sent. The cost must not grow with the clusters' Works; it grows
// with the refs the server lists, so only with status refs in the same
// repository.
func BenchmarkPullAgentSteadyState(b *testing.B) {
	for _, n := range []int{10, 200} {
		for _, layout := range []string{"same-repo", "separate-status-repo"} {
			r := e2etest.HTTPRemote(b)
			statusDir := r.Dir
			if layout == "separate-status-repo" {
				if _, err := r.Server.InitBare("status.git"); err != nil {
					b.Fatal(err)
				}
				statusDir = filepath.Join(r.Server.Root, "status.git")
			}
			ws := workBranch(b, n)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			if _, err := newGitStore(b, gitstore.Options{URL: r.URL}).Put(ctx, "rev-1", ws); err != nil {
				b.Fatal(err)
			}
			cancel()
			writeStatusRefs(b, statusDir, ws)

			b.Run(fmt.Sprintf("clusters=%d/status=%s", n, layout), func(b *testing.B) {
				store := newGitStore(b, gitstore.Options{URL: r.URL})
				ctx := context.Background()
				if w, err := store.ListCluster(ctx, "c-000"); err != nil || w == nil {
					b.Fatalf("first poll: %v, %v", w, err)
				}
				refs, fetches, sent := r.Server.RefAdvertisements(), r.Server.Fetches(), r.Server.BytesSent()
				b.ResetTimer()
				for b.Loop() {
					w, err := store.ListCluster(ctx, "c-000")
					if err != nil || w == nil || len(w.Spec.Manifests) != benchObjects {
						b.Fatalf("poll: %v, %v", w, err)
					}
				}
				b.StopTimer()
				per := func(v int64) float64 { return float64(v) / float64(b.N) }
				b.ReportMetric(per(r.Server.RefAdvertisements()-refs), "reflists/op")
				b.ReportMetric(per(r.Server.Fetches()-fetches), "fetches/op")
				b.ReportMetric(per(r.Server.BytesSent()-sent), "bytes-fetched/op")
			})
		}
	}
}
