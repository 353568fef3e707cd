package render

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/restrict"
)

// restrictTargets refuses, per cluster, the rendered objects the
// restriction policy denies: each becomes a render failure, so its cluster
// keeps what it ran (keepRecorded) and lint and diff report it. Frozen old
// copies (a pending eviction's) were admitted when they were rendered and
// are left alone.
func restrictTargets(bindings []*Binding, policy *restrict.Policy) {
	checked := map[*unstructured.Unstructured]*restrict.Refusal{} // objects are shared between a binding's clusters
	for _, b := range bindings {
		clear(checked)
		for _, t := range b.Targets {
			if t.Object == nil || t.Evicted != nil {
				continue
			}
			r, ok := checked[t.Object]
			if !ok {
				r = policy.Check(t.Object, b.Template.Source.Path)
				checked[t.Object] = r
			}
			if r == nil {
				continue
			}
			t.Failure = &RenderError{Template: b.Key, Source: b.Template.Source, Cluster: t.Cluster, Path: r.Path,
				Message: "refused by the restriction policy (" + r.Rule + "): " + r.Message}
			t.Error = t.Failure.Path + ": " + t.Failure.Message
			t.Object = nil
		}
	}
}
