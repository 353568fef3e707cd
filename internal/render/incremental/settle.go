package incremental

import (
	"crypto/sha256"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
)

// Settled bindings: a template whose placement came from the memo and whose
// targets went through every stage unchanged (rendered from the memo, no
// failure, nothing kept, preserved or attached) ends a Render "settled".
// The next Render, when its placement key is the same, starts from those
// very targets, shared read-only with the previous Result, and skips what
// would give the same again: rendering (while the render memo's key holds),
// the restriction check (while the policy and the template's folder hold)
// and the allocation of its targets. A stage that changes the targets gives
// the binding a slice of its own first (render's stages all do): the
// binding is no longer shared then, which runState notices by comparing
// slices. Attaching a dependency or auto-propagating a Namespace needs the
// targets unrendered: the binding takes its placement's (unshare).

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
	sent    *render.Sent
	targets []*render.Target
}

// sharedTargets marks a binding whose Targets are a settled binding's.
type sharedTargets struct {
	settled *settled
	// placement gives unrendered targets back (unshare).
	placement *scheduleEntry
}

// runState is the memo's record of one Render's bindings, by position:
// what render.Binding does not carry.
type runState struct {
	// placement is the placement memo's key of each binding whose targets
	// are exactly what that key decides (zero otherwise): it stands for
	// the placement in the render memo's key.
	placement [][sha256.Size]byte
	// shared is set while a binding's targets are a settled binding's.
	shared []*sharedTargets
	// rendered are the targets as rendering left them: a stage that
	// replaced them touched the binding.
	rendered [][]*render.Target
	// sameKey and sent are what group worked out (or a placed binding
	// brought along).
	sameKey []bool
	sent    []*render.Sent
}

func newRunState(n int) *runState {
	return &runState{placement: make([][sha256.Size]byte, n), shared: make([]*sharedTargets, n),
		rendered: make([][]*render.Target, n), sameKey: make([]bool, n), sent: make([]*render.Sent, n)}
}

// sameSlice reports whether a and b are the very same slice.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// isShared reports whether the i-th binding, b, still has the targets of
// the settled binding it shared: no stage replaced them.
func (st *runState) isShared(i int, b *render.Binding) bool {
	s := st.shared[i]
	return s != nil && sameSlice(b.Targets, s.settled.targets)
}

// unshare gives the i-th binding, b, the unrendered targets of its
// placement, to be rendered again.
func (st *runState) unshare(i int, b *render.Binding) {
	if st.shared[i] == nil {
		return
	}
	st.shared[i].placement.restore(b)
	st.shared[i], st.sent[i], st.sameKey[i] = nil, nil, false
}

// unshareExtended handles the bindings a stage after placement gave more
// targets (an attached dependency, an auto-propagated Namespace): their
// targets are no longer their placement's alone, and those they shared
// must be rendered again, as the placement's.
func (st *runState) unshareExtended(bindings []*render.Binding) {
	for i, b := range bindings {
		if !b.AlsoAutoPropagated && len(b.DependencyOf) == 0 {
			continue
		}
		st.placement[i] = [sha256.Size]byte{}
		s := st.shared[i]
		if s == nil {
			continue
		}
		own := make(map[*render.Target]bool, len(s.settled.targets))
		for _, t := range s.settled.targets {
			own[t] = true
		}
		targets := make([]*render.Target, len(b.Targets))
		for j, t := range b.Targets {
			if own[t] {
				t = &render.Target{Cluster: t.Cluster, Replicas: t.Replicas, Scheduled: t.Scheduled, Suspended: t.Suspended}
			}
			targets[j] = t
		}
		b.Targets = targets
		st.shared[i], st.sent[i], st.sameKey[i] = nil, nil, false
	}
}

// markRendered records the targets as rendering left them.
func (st *runState) markRendered(bindings []*render.Binding) {
	for i, b := range bindings {
		st.rendered[i] = b.Targets
	}
}

// admitted marks the bindings whose shared targets passed the restriction
// policy of digest sum already (ok false: none did).
func (st *runState) admitted(bindings []*render.Binding, sum [sha256.Size]byte, ok bool) []bool {
	out := make([]bool, len(bindings))
	for i, b := range bindings {
		s := st.shared[i]
		out[i] = ok && s != nil && st.isShared(i, b) && s.settled.restrictions == sum && s.settled.source == b.Template.Source.Path
	}
	return out
}

// stillShared marks the bindings whose targets are still settled ones:
// nothing failed in them.
func (st *runState) stillShared(bindings []*render.Binding) []bool {
	out := make([]bool, len(bindings))
	for i, b := range bindings {
		out[i] = st.isShared(i, b)
	}
	return out
}

// settle keeps the settled bindings of this Render, of the templates of
// keys, for the next one; restrictions is the digest of the restriction
// policy (ok false: none settles).
func (m *Memo) settle(st *runState, bindings []*render.Binding, keys []workv1alpha1.ObjectKey, restrictions [sha256.Size]byte, ok bool) {
	out := make([]*settled, len(bindings))
	defer func() { m.settled.keep(keys, out) }()
	for i, b := range bindings {
		if !ok {
			break
		}
		if st.isShared(i, b) {
			s := st.shared[i].settled
			if s.restrictions != restrictions || s.source != b.Template.Source.Path || s.sent != st.sent[i] {
				cp := *s
				cp.restrictions, cp.source, cp.sent = restrictions, b.Template.Source.Path, st.sent[i]
				out[i] = &cp
			} else {
				out[i] = s
			}
			m.carryPlaced(i, keys, out[i], st)
			continue
		}
		if !st.settles(i, b) {
			continue
		}
		out[i] = &settled{scheduleSum: st.placement[i], restrictions: restrictions, source: b.Template.Source.Path,
			sameKey: st.sameKey[i], sent: st.sent[i], targets: b.Targets[:len(b.Targets):len(b.Targets)]} // an append copies
	}
}

// carryPlaced gives the i-th template's placed binding (placememo.go), when
// it shares s, what group worked out of s, so that the next Render does not
// read s for it.
func (m *Memo) carryPlaced(i int, keys []workv1alpha1.ObjectKey, s *settled, st *runState) {
	p := &m.placements
	if len(keys) == 0 || len(p.keys) != len(keys) || &p.keys[0] != &keys[0] {
		return
	}
	if snap := p.vals[i].placed; snap != nil && snap.shared != nil && snap.shared.settled == s {
		snap.sent, snap.sameKey = st.sent[i], st.sameKey[i]
	}
}

// settles reports whether the i-th binding's targets, b's, are exactly what
// its placement and the render memo give.
func (st *runState) settles(i int, b *render.Binding) bool {
	if st.placement[i] == ([sha256.Size]byte{}) || !sameSlice(b.Targets, st.rendered[i]) || b.Unclaimed ||
		len(b.DependencyOf) > 0 || len(b.Evictions) > 0 {
		return false
	}
	for _, t := range b.Targets {
		if t.Failure != nil || t.Error != "" || t.Kept || t.Evicted != nil {
			return false
		}
	}
	return true
}
