package incremental

import (
	"crypto/sha256"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/restrict"
)

// verdict is the restriction policy's answer on one rendered object.
type verdict struct {
	policy  [sha256.Size]byte
	source  string
	refusal *restrict.Refusal
}

// restrictions returns policy.Check through the memo's verdicts, reused
// while the policy and the template's folder are the same; the memo keeps
// the verdicts of this Render's objects only. Rendered objects are never
// changed, so an object's pointer stands for its content. It returns the
// policy's digest too (false when it cannot be encoded).
func (m *Memo) restrictions(policy *restrict.Policy) (render.Check, [sha256.Size]byte, bool) {
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
