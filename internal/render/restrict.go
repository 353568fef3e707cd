package render

import (
	"crypto/sha256"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/restrict"
)

// restrictTargets refuses, per cluster, the rendered objects the
// restriction policy denies: each becomes a render failure, so its cluster
// keeps what it ran (keepRecorded) and lint and diff report it. Frozen old
// copies (a pending eviction's) were admitted when they were rendered and
// are left alone. With a memo, the verdict on an object rendered before is
// reused while the policy and the template's folder are the same, and a
// settled binding that passed them is not checked again. It returns the
// policy's digest (false when it cannot be encoded).
func restrictTargets(bindings []*Binding, policy *restrict.Policy, m *Memo) ([sha256.Size]byte, bool) {
	check, sum, sumOK := m.restrictions(policy)
	checked := map[*unstructured.Unstructured]*restrict.Refusal{} // objects are shared between a binding's clusters
	for _, b := range bindings {
		if s := b.shared; s != nil && sumOK && s.settled.restrictions == sum && s.settled.source == b.Template.Source.Path {
			continue
		}
		clear(checked)
		for i := range b.Targets {
			t := b.Targets[i] // b.own may replace b.Targets
			if t.Object == nil || t.Evicted != nil {
				continue
			}
			r, ok := checked[t.Object]
			if !ok {
				r = check(t.Object, b.Template.Source.Path)
				checked[t.Object] = r
			}
			if r == nil {
				continue
			}
			if b.shared != nil {
				b.own()
				t = b.Targets[i]
			}
			t.Failure = &RenderError{Template: b.Key, Source: b.Template.Source, Cluster: t.Cluster, Path: r.Path,
				Message: "refused by the restriction policy (" + r.Rule + "): " + r.Message}
			t.Error = t.Failure.Path + ": " + t.Failure.Message
			t.Object = nil
		}
	}
	return sum, sumOK
}

// verdict is the restriction policy's answer on one rendered object.
type verdict struct {
	policy  [sha256.Size]byte
	source  string
	refusal *restrict.Refusal
}

// restrictions returns policy.Check, through the memo's verdicts when m is
// not nil; the memo keeps the verdicts of this Render's objects only.
// Rendered objects are never changed, so an object's pointer stands for
// its content.
func (m *Memo) restrictions(policy *restrict.Policy) (func(*unstructured.Unstructured, string) *restrict.Refusal, [sha256.Size]byte, bool) {
	if m == nil {
		return policy.Check, [sha256.Size]byte{}, false
	}
	sum, ok := digestOf(policy)
	prior := m.verdicts
	m.verdicts = make(map[*unstructured.Unstructured]verdict, len(prior))
	return func(obj *unstructured.Unstructured, source string) *restrict.Refusal {
		if v, hit := prior[obj]; ok && hit && v.policy == sum && v.source == source {
			m.verdicts[obj] = v
			return v.refusal
		}
		r := policy.Check(obj, source)
		if ok {
			m.verdicts[obj] = verdict{policy: sum, source: source, refusal: r}
		}
		return r
	}, sum, ok
}
