package gitstore

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/works"
)

// List fetches the work branch and returns every cluster's Work, manifests
// included and sorted, ordered by cluster. An absent branch holds no Works.
func (g *Store) List(ctx context.Context) ([]*workv1alpha1.Work, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	tip, err := g.fetchTip(ctx, &g.works, &g.worksTip)
	if err != nil || tip.IsZero() {
		return nil, err
	}
	root, err := gitrepo.CommitTree(g.works, tip)
	if err != nil {
		return nil, err
	}
	var out []*workv1alpha1.Work
	for _, e := range root.Entries {
		if e.Mode != filemode.Dir {
			continue
		}
		w, err := readFolder(root, e.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec.Cluster < out[j].Spec.Cluster })
	return out, nil
}

// ListCluster returns the Work of one cluster, or nil when the branch (or
// the cluster's folder) does not exist. It is what a pull agent calls: the
// fetch is shallow (depth 1) when the server supports it, into storage of
// its own, and only the cluster's folder is read.
func (g *Store) ListCluster(ctx context.Context, cluster string) (*workv1alpha1.Work, error) {
	if err := works.ValidateCluster(cluster); err != nil {
		return nil, err
	}
	g.agentMu.Lock()
	defer g.agentMu.Unlock()
	tip, err := g.fetchTip(ctx, &g.agent, &g.agentTip)
	if err != nil || tip.IsZero() {
		return nil, err
	}
	if err := g.verifyTip(g.agent, tip); err != nil {
		return nil, err
	}
	root, err := gitrepo.CommitTree(g.agent, tip)
	if err != nil {
		return nil, err
	}
	w, err := readFolder(root, cluster)
	if errors.Is(err, object.ErrDirectoryNotFound) {
		return nil, nil
	}
	return w, err
}

// fetchTip fetches the work branch into *s and keeps only its tip there
// (see keepTip), *last being the tip *s holds. go-git's in-process file://
// server serves no shallow fetch and takes a have to stand for its whole
// history, which a compacted storage does not hold: a tip that brings back
// a file only an older commit had arrives without it. The tip is then
// fetched again into empty storage.
func (g *Store) fetchTip(ctx context.Context, s *storage.Storer, last *plumbing.Hash) (plumbing.Hash, error) {
	tip, err := g.fetch(ctx, g.worksEP, *s, g.branchRef(), g.trackingRef(), 1)
	if err == nil {
		err = gitrepo.KeepTip(s, last, g.trackingRef(), tip)
	}
	if !errors.Is(err, plumbing.ErrObjectNotFound) {
		return tip, err
	}
	fresh := memory.NewStorage()
	if tip, err = g.fetch(ctx, g.worksEP, fresh, g.branchRef(), g.trackingRef(), 1); err != nil {
		return tip, err
	}
	*s, *last = fresh, plumbing.ZeroHash
	return tip, gitrepo.KeepTip(s, last, g.trackingRef(), tip)
}

// readFolder decodes the Work in the folder cluster of root.
func readFolder(root *object.Tree, cluster string) (*workv1alpha1.Work, error) {
	sub, err := root.Tree(cluster)
	if err != nil {
		return nil, err
	}
	files, err := gitrepo.ReadFiles(sub)
	if err != nil {
		return nil, fmt.Errorf("failed to read the work of %s: %w", cluster, err)
	}
	return works.DecodeWork(cluster, files)
}
