package gitstore

import (
	"sync/atomic"

	"github.com/propagit/propagit/internal/works"
)

var _ works.WriteCounter = (*Store)(nil)

// writeCounters is a store's works.WriteCounts, safe for concurrent use.
type writeCounters struct {
	blobs, trees, statusWrites, statusEntries atomic.Int64
}

func (c *writeCounters) load() works.WriteCounts {
	return works.WriteCounts{Blobs: c.blobs.Load(), Trees: c.trees.Load(),
		StatusWrites: c.statusWrites.Load(), StatusEntries: c.statusEntries.Load()}
}

// Written returns the objects g wrote so far.
func (g *Store) Written() works.WriteCounts { return g.written.load() }

// counted adds what w wrote to g's counts.
func (g *Store) counted(w *treeWriter) {
	g.written.blobs.Add(int64(w.blobs))
	g.written.trees.Add(int64(w.trees))
}
