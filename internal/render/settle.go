package render

import (
	"crypto/sha256"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Settled bindings: a template whose placement came from the memo and whose
// targets went through every stage unchanged (rendered from the memo, no
// failure, nothing kept, preserved or attached) ends a Render "settled".
// The next Render, when its placement key is the same, starts from those
// very targets, shared read-only with the previous Result, and skips what
// would give the same again: rendering (while the render memo's key holds),
// the restriction check (while the policy and the template's folder hold)
// and the allocation of its targets. A stage that must change the targets
// takes its own copy first (own), and attach, which needs the targets
// unrendered, takes the placement's (unshare). Only what changed costs.

// settled is what the memo keeps of a settled binding.
type settled struct {
	scheduleSum [sha256.Size]byte
	// restrictions and source are the restriction policy's digest and the
	// template's file the targets passed.
	restrictions [sha256.Size]byte
	source       string
	// sameKey is set when every object has the template's key; sent is
	// what the targets send (nil when group did not work it out).
	sameKey bool
	sent    *sent
	targets []*Target
}

// sharedTargets marks a binding whose Targets are a settled binding's.
type sharedTargets struct {
	settled *settled
	// placement gives unrendered targets back (unshare).
	placement *scheduleEntry
}

// own gives b targets of its own, copies of the shared ones, before a
// stage changes them.
func (b *Binding) own() {
	if b.shared == nil {
		return
	}
	b.sent, b.sameKey = nil, false // worked out again from the targets
	slab := make([]Target, len(b.Targets))
	targets := make([]*Target, len(b.Targets))
	for i, t := range b.Targets {
		slab[i] = *t
		targets[i] = &slab[i]
	}
	b.Targets, b.shared = targets, nil
}

// unshare gives b the unrendered targets of its placement, to be rendered
// again.
func (b *Binding) unshare() {
	if b.shared == nil {
		return
	}
	b.shared.placement.restore(b)
	b.shared, b.sent, b.sameKey = nil, nil, false
}

// settle keeps the settled bindings of this Render, of the templates of
// keys, for the next one; restrictions is the digest of the restriction
// policy (ok false: none settles).
func (m *Memo) settle(bindings []*Binding, keys []workv1alpha1.ObjectKey, restrictions [sha256.Size]byte, ok bool) {
	out := make([]*settled, len(bindings))
	defer func() { m.settled.keep(keys, out) }()
	for i, b := range bindings {
		if !ok {
			break
		}
		if s := b.shared; s != nil {
			if s.settled.restrictions != restrictions || s.settled.source != b.Template.Source.Path || s.settled.sent != b.sent {
				cp := *s.settled
				cp.restrictions, cp.source, cp.sent = restrictions, b.Template.Source.Path, b.sent
				out[i] = &cp
			} else {
				out[i] = s.settled
			}
			m.carryPlaced(i, keys, out[i], b)
			continue
		}
		if !settles(b) {
			continue
		}
		out[i] = &settled{scheduleSum: b.scheduleSum, restrictions: restrictions, source: b.Template.Source.Path,
			sameKey: b.sameKey, sent: b.sent, targets: b.Targets[:len(b.Targets):len(b.Targets)]} // an append copies
	}
}

// carryPlaced gives the i-th template's placed binding (placememo.go), when
// it shares s, what group worked out of s for b, so that the next Render
// does not read s for it.
func (m *Memo) carryPlaced(i int, keys []workv1alpha1.ObjectKey, s *settled, b *Binding) {
	p := &m.placements
	if len(keys) == 0 || len(p.keys) != len(keys) || &p.keys[0] != &keys[0] {
		return
	}
	if snap := p.vals[i].placed; snap != nil && snap.shared != nil && snap.shared.settled == s {
		snap.sent, snap.sameKey = b.sent, b.sameKey
	}
}

// settles reports whether b's targets are exactly what its placement and
// the render memo give.
func settles(b *Binding) bool {
	if b.scheduleSum == ([sha256.Size]byte{}) || b.touched || b.Unclaimed || len(b.DependencyOf) > 0 || len(b.Evictions) > 0 {
		return false
	}
	for _, t := range b.Targets {
		if t.Failure != nil || t.Error != "" || t.Kept || t.Evicted != nil {
			return false
		}
	}
	return true
}
