package memberstore

import "github.com/propagit/propagit/internal/works"

var _ works.WriteCounter = (*Store)(nil)

// Written returns the objects written to every member's repository so far.
func (m *Store) Written() works.WriteCounts {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out works.WriteCounts
	for _, g := range m.stores {
		out = out.Add(g.Written())
	}
	return out
}
