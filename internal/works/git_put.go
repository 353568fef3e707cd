package works

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// encodedWork is one cluster's Work and the files of its folder.
type encodedWork struct {
	work  *workv1alpha1.Work
	files map[string][]byte
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
func (g *GitStore) Put(ctx context.Context, revision string, ws []*workv1alpha1.Work) ([]string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.memo.start()
	enc, err := encodeAll(revision, ws, &g.memo)
	if err != nil {
		return nil, fmt.Errorf("failed to encode works: %w", err)
	}
	for attempt := 1; ; attempt++ {
		changed, err := g.putOnce(ctx, revision, enc)
		if err == nil {
			return changed, nil
		}
		if !isRejected(err) || attempt >= g.opts.PushAttempts || ctx.Err() != nil {
			return nil, fmt.Errorf("failed to record works of %s%s: %w", shortRev(revision), attempts(attempt), err)
		}
	}
}

// putOnce fetches the branch, builds the new tree on its tip and pushes a
// commit when the tree differs.
func (g *GitStore) putOnce(ctx context.Context, revision string, enc map[string]*encodedWork) ([]string, error) {
	tip, err := g.fetch(ctx, g.worksEP, g.works, g.branchRef(), g.trackingRef(), 1)
	if err != nil {
		return nil, err
	}
	var old *object.Tree
	if !tip.IsZero() {
		if old, err = commitTree(g.works, tip); err != nil {
			return nil, err
		}
	}
	root, changed, err := buildRoot(g.works, old, enc)
	if err != nil {
		return nil, err
	}
	if (old == nil && len(enc) == 0) || (old != nil && old.Hash == root) {
		return nil, keepTip(&g.works, &g.worksTip, g.trackingRef(), tip)
	}
	commit, err := g.writeCommit(g.works, root, tip, renderMessage(revision, changed))
	if err != nil {
		return nil, err
	}
	if err := g.push(ctx, g.worksEP, g.works, g.branchRef(), g.branchRef(), commit); err != nil {
		return nil, err
	}
	return changed, keepTip(&g.works, &g.worksTip, g.trackingRef(), commit)
}

// buildRoot stores the tree of every cluster's folder and the root tree,
// reusing a stored folder whose content is unchanged, and returns the root
// and the clusters whose folder changed, sorted.
func buildRoot(s storer.EncodedObjectStorer, old *object.Tree, enc map[string]*encodedWork) (plumbing.Hash, []string, error) {
	var entries []object.TreeEntry
	var changed []string
	for cluster, ew := range enc {
		prev := oldFolder(old, cluster)
		h, err := folderHash(s, old, prev, ew)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		if prev == nil || prev.Hash != h {
			changed = append(changed, cluster)
		}
		entries = append(entries, object.TreeEntry{Name: cluster, Mode: filemode.Dir, Hash: h})
	}
	if old != nil {
		for _, e := range old.Entries {
			if _, kept := enc[e.Name]; !kept && e.Mode == filemode.Dir {
				changed = append(changed, e.Name)
			}
		}
	}
	sort.Strings(changed)
	root, err := writeTree(s, entries)
	return root, changed, err
}

// oldFolder returns the stored folder entry of cluster, or nil.
func oldFolder(old *object.Tree, cluster string) *object.TreeEntry {
	if old == nil {
		return nil
	}
	for i, e := range old.Entries {
		if e.Name == cluster && e.Mode == filemode.Dir {
			return &old.Entries[i]
		}
	}
	return nil
}

// folderHash stores ew's folder and returns its tree. When the stored
// folder prev records another source revision, the folder is first built
// with that revision (only WorkFile differs): if that matches prev, only
// the revision differs and prev is kept.
func folderHash(s storer.EncodedObjectStorer, old *object.Tree, prev *object.TreeEntry, ew *encodedWork) (plumbing.Hash, error) {
	if prev != nil {
		sub, err := old.Tree(prev.Name)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("failed to read folder %s: %w", prev.Name, err)
		}
		if rev, ok := storedRevision(sub); ok && rev != ew.work.Spec.SourceRevision {
			w := *ew.work // the head only: manifests are shared, not changed
			w.Spec.SourceRevision = rev
			head, err := encodeHead(&w)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			files := maps.Clone(ew.files)
			files[WorkFile] = head
			if h, err := writeFiles(s, files); err != nil || h == prev.Hash {
				return h, err
			}
		}
	}
	return writeFiles(s, ew.files)
}

// storedRevision reads the source revision of a stored cluster folder.
func storedRevision(folder *object.Tree) (string, bool) {
	f, err := folder.File(WorkFile)
	if err != nil {
		return "", false
	}
	content, err := f.Contents()
	if err != nil {
		return "", false
	}
	var wf workFile
	if err := yaml.Unmarshal([]byte(content), &wf); err != nil {
		return "", false
	}
	return wf.Spec.SourceRevision, true
}

// writeCommit stores a commit of tree with parent (none when zero).
func (g *GitStore) writeCommit(s storer.EncodedObjectStorer, tree, parent plumbing.Hash, msg string) (plumbing.Hash, error) {
	sig := object.Signature{Name: g.opts.AuthorName, Email: g.opts.AuthorEmail, When: g.now()}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	h, err := writeObject(s, c)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("failed to store commit: %w", err)
	}
	return h, nil
}

// renderMessage is the work branch commit message for revision.
func renderMessage(revision string, changed []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "propagit: render %s\n\n", shortRev(revision))
	if len(changed) > 0 {
		fmt.Fprintf(&b, "Changed clusters: %s\n\n", strings.Join(changed, ", "))
	}
	fmt.Fprintf(&b, "%s%s\n", sourceRevisionTrailer, revision)
	return b.String()
}

// attempts describes how many push rounds a write took, when more than one.
func attempts(n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf(" after %d attempts", n)
}

// shortRev shortens a revision for a commit message.
func shortRev(rev string) string {
	if rev == "" {
		return "(no revision)"
	}
	return workv1alpha1.ShortRevision(rev)
}
