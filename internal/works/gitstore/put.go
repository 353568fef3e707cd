package gitstore

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/works"
)

// encodedWork is one cluster's Work and the files of its folder.
type encodedWork struct {
	work  *workv1alpha1.Work
	files map[string]indexFile
}

// encodeAll encodes every Work, giving those without a source revision
// revision, and refuses two Works for one cluster.
func encodeAll(revision string, ws []*workv1alpha1.Work, memo *encodeMemo) (map[string]*encodedWork, error) {
	out := make(map[string]*encodedWork, len(ws))
	for _, w := range ws {
		cp := *w // manifests are shared, never changed
		w = &cp
		if w.Spec.SourceRevision == "" {
			w.Spec.SourceRevision = revision
		}
		if _, dup := out[w.Spec.Cluster]; dup {
			return nil, fmt.Errorf("two works for cluster %s", w.Spec.Cluster)
		}
		files, err := encodeWorkWith(w, memo)
		if err != nil {
			return nil, err
		}
		out[w.Spec.Cluster] = &encodedWork{work: w, files: files}
	}
	return out, nil
}

// Put records the Works rendered from revision as one commit on the work
// branch, and returns the clusters whose folder changed. A Work that differs
// from the stored one only in its source revision is left as it is (it
// keeps the revision that last changed it), so a commit that changes
// nothing for a cluster does not touch that cluster's folder, and a
// revision that changes nothing at all makes no commit. Clusters absent
// from works lose their folder. When the branch moved between fetch and
// push, Put refetches and rebuilds, up to PushAttempts times.
func (g *Store) Put(ctx context.Context, revision string, ws []*workv1alpha1.Work) ([]string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.memo.start()
	enc, err := encodeAll(revision, ws, &g.memo)
	if err != nil {
		return nil, fmt.Errorf("failed to encode works: %w", err)
	}
	changed, ok, err := g.putOnLease(ctx, revision, enc)
	switch {
	case ok:
		return changed, nil
	case err != nil && !gitrepo.IsRejected(err):
		return nil, fmt.Errorf("failed to record works of %s: %w", workv1alpha1.DisplayRevision(revision), err)
	}
	for attempt := 1; ; attempt++ {
		changed, err := g.putOnce(ctx, revision, enc)
		if err == nil {
			return changed, nil
		}
		if !gitrepo.IsRejected(err) || attempt >= g.opts.PushAttempts || ctx.Err() != nil {
			return nil, fmt.Errorf("failed to record works of %s%s: %w", workv1alpha1.DisplayRevision(revision), attempts(attempt), err)
		}
	}
}

// putOnce fetches the branch, builds the new tree on its tip and pushes a
// commit when the tree differs.
func (g *Store) putOnce(ctx context.Context, revision string, enc map[string]*encodedWork) ([]string, error) {
	tip, err := g.fetch(ctx, g.worksEP, g.works, g.branchRef(), g.trackingRef(), 1)
	if err != nil {
		return nil, err
	}
	old, err := g.indexAt(tip)
	if err != nil {
		return nil, err
	}
	w := &treeWriter{s: g.works}
	root, changed, err := w.buildRoot(old, enc)
	if err != nil {
		return nil, err
	}
	g.counted(w)
	if (old == nil && len(enc) == 0) || (old != nil && old.hash == root.hash) {
		return nil, gitrepo.KeepTip(&g.works, &g.worksTip, g.trackingRef(), tip)
	}
	commit, err := g.writeCommit(g.works, root.hash, tip, renderMessage(revision, changed))
	if err != nil {
		return nil, err
	}
	if err := g.push(ctx, g.worksEP, g.works, g.branchRef(), g.branchRef(), commit); err != nil {
		return nil, err
	}
	g.index, g.indexTip = root, commit
	return changed, gitrepo.KeepTip(&g.works, &g.worksTip, g.trackingRef(), commit)
}

// putOnLease builds the new tree on the one this store last recorded or
// read (its index), and pushes it on the condition that the branch is
// still at that tree's commit (a lease the push checks against the ref the
// server advertises, and the server again when it updates the ref): a
// commit costs one push, no fetch. It reports whether it recorded the
// Works. It does not when there is no index, when the tree is unchanged
// (only a fetch tells whether the branch moved meanwhile), or when the
// lease fails (the branch moved): the caller then fetches and builds on
// the tip.
func (g *Store) putOnLease(ctx context.Context, revision string, enc map[string]*encodedWork) ([]string, bool, error) {
	if g.index == nil {
		return nil, false, nil
	}
	w := &treeWriter{s: g.works}
	root, changed, err := w.buildRoot(g.index, enc)
	g.counted(w)
	if err != nil || root.hash == g.index.hash {
		return nil, false, err
	}
	commit, err := g.writeCommit(g.works, root.hash, g.indexTip, renderMessage(revision, changed))
	if err != nil {
		return nil, false, err
	}
	if err := g.pushLease(ctx, commit, g.indexTip); err != nil {
		return nil, false, err
	}
	g.index, g.indexTip = root, commit
	return changed, true, gitrepo.KeepTip(&g.works, &g.worksTip, g.trackingRef(), commit)
}

// indexAt returns the index of the tree of commit tip (nil when zero): the
// one kept from the last Put or read when tip is that Put's commit, read
// from the fetched tree otherwise (after a restart, or when another writer
// moved the branch).
func (g *Store) indexAt(tip plumbing.Hash) (*treeIndex, error) {
	if tip.IsZero() {
		return nil, nil
	}
	if g.index != nil && g.indexTip == tip {
		return g.index, nil
	}
	c, err := object.GetCommit(g.works, tip)
	if err != nil {
		return nil, fmt.Errorf("failed to read commit %s: %w", tip, err)
	}
	ix, err := readIndex(g.works, c.TreeHash)
	if err != nil {
		return nil, err
	}
	g.index, g.indexTip = ix, tip
	return ix, nil
}

// buildRoot builds the folder of every cluster and the root tree against
// old (nil: none), writing only what old does not hold, and returns the
// root and the clusters whose folder changed, sorted.
func (w *treeWriter) buildRoot(old *treeIndex, enc map[string]*encodedWork) (*treeIndex, []string, error) {
	root := &treeIndex{files: map[string]indexFile{}, dirs: map[string]*treeIndex{}}
	var changed []string
	for cluster, ew := range enc {
		var prev *treeIndex
		if old != nil {
			prev = old.dirs[cluster]
		}
		f, err := w.folder(prev, ew)
		if err != nil {
			return nil, nil, err
		}
		if prev == nil || prev.hash != f.hash {
			changed = append(changed, cluster)
		}
		root.dirs[cluster] = f
	}
	if old != nil {
		for name := range old.dirs {
			if _, kept := enc[name]; !kept {
				changed = append(changed, name)
			}
		}
	}
	sort.Strings(changed)
	return root, changed, w.seal(root, old)
}

// folder builds ew's folder against prev, the stored one (nil: none).
// When prev records another source revision and ew's folder with that
// revision is prev, only the revision differs: prev is kept as it is.
func (w *treeWriter) folder(prev *treeIndex, ew *encodedWork) (*treeIndex, error) {
	ix, err := w.children(ew.files, prev)
	if err != nil {
		return nil, err
	}
	if prev != nil {
		if same, err := w.sameButRevision(prev, ix, ew); err != nil || same {
			return prev, err
		}
	}
	ix.revision, ix.revOK = ew.work.Spec.SourceRevision, true
	return ix, w.seal(ix, prev)
}

// sameButRevision reports whether ix, ew's folder, is prev apart from the
// source revision in works.WorkFile.
func (w *treeWriter) sameButRevision(prev, ix *treeIndex, ew *encodedWork) (bool, error) {
	rev, ok := w.revision(prev)
	if !ok || rev == ew.work.Spec.SourceRevision {
		return false, nil
	}
	wk := *ew.work // the head only: manifests are shared, not changed
	wk.Spec.SourceRevision = rev
	head, err := works.EncodeHead(&wk)
	if err != nil {
		return false, err
	}
	h, err := ix.hashWith(works.WorkFile, newIndexFile(head))
	return h == prev.hash, err
}

// revision returns the source revision recorded in folder's works.WorkFile,
// reading it once.
func (w *treeWriter) revision(folder *treeIndex) (string, bool) {
	if !folder.revOK {
		f, ok := folder.files[works.WorkFile]
		if !ok {
			return "", false
		}
		rev, ok := storedRevision(w.s, f.hash)
		if !ok {
			return "", false
		}
		folder.revision, folder.revOK = rev, true
	}
	return folder.revision, true
}

// storedRevision reads the source revision of the works.WorkFile blob h.
func storedRevision(s storer.EncodedObjectStorer, h plumbing.Hash) (string, bool) {
	b, err := object.GetBlob(s, h)
	if err != nil {
		return "", false
	}
	r, err := b.Reader()
	if err != nil {
		return "", false
	}
	defer r.Close()
	content, err := io.ReadAll(r)
	if err != nil {
		return "", false
	}
	return works.SourceRevision(content)
}

// writeCommit stores a commit of tree with parent (none when zero).
func (g *Store) writeCommit(s storer.EncodedObjectStorer, tree, parent plumbing.Hash, msg string) (plumbing.Hash, error) {
	sig := object.Signature{Name: g.opts.AuthorName, Email: g.opts.AuthorEmail, When: g.now()}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	h, err := g.writeSigned(s, c)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("failed to store commit: %w", err)
	}
	return h, nil
}

// renderMessage is the work branch commit message for revision.
func renderMessage(revision string, changed []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "propagit: render %s\n\n", workv1alpha1.DisplayRevision(revision))
	if len(changed) > 0 {
		fmt.Fprintf(&b, "Changed clusters: %s\n\n", strings.Join(changed, ", "))
	}
	fmt.Fprintf(&b, "%s%s\n", SourceRevisionTrailer, revision)
	return b.String()
}

// attempts describes how many push rounds a write took, when more than one.
func attempts(n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf(" after %d attempts", n)
}
