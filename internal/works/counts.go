package works

import "sync/atomic"

// WriteCounts are the objects a store wrote since it was built, so metrics
// and benchmarks can tell what one commit cost: a commit that changes one
// object should write one blob per cluster that receives it, the trees
// above it, and one status entry per cluster.
type WriteCounts struct {
	// Blobs and Trees are the Git objects written for Works.
	Blobs, Trees int64
	// StatusWrites are the status records written; StatusEntries the
	// inventory and object entries encoded for them (entries unchanged
	// since the last record are reused, not encoded).
	StatusWrites, StatusEntries int64
}

// Add returns c plus d.
func (c WriteCounts) Add(d WriteCounts) WriteCounts {
	return WriteCounts{Blobs: c.Blobs + d.Blobs, Trees: c.Trees + d.Trees,
		StatusWrites: c.StatusWrites + d.StatusWrites, StatusEntries: c.StatusEntries + d.StatusEntries}
}

// WriteCounter knows how many objects its store wrote.
type WriteCounter interface {
	Written() WriteCounts
}

var (
	_ WriteCounter = (*GitStore)(nil)
	_ WriteCounter = (*MemberGitStore)(nil)
)

// writeCounters is a store's WriteCounts, safe for concurrent use.
type writeCounters struct {
	blobs, trees, statusWrites, statusEntries atomic.Int64
}

func (c *writeCounters) load() WriteCounts {
	return WriteCounts{Blobs: c.blobs.Load(), Trees: c.trees.Load(),
		StatusWrites: c.statusWrites.Load(), StatusEntries: c.statusEntries.Load()}
}

// Written returns the objects g wrote so far.
func (g *GitStore) Written() WriteCounts { return g.written.load() }

// counted adds what w wrote to g's counts.
func (g *GitStore) counted(w *treeWriter) {
	g.written.blobs.Add(int64(w.blobs))
	g.written.trees.Add(int64(w.trees))
}

// Written returns the objects written to every member's repository so far.
func (m *MemberGitStore) Written() WriteCounts {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out WriteCounts
	for _, g := range m.stores {
		out = out.Add(g.Written())
	}
	return out
}
