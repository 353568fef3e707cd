package works

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
