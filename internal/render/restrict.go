package render

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/restrict"
)

// restrictTargets refuses, per cluster, the rendered objects check denies:
// each becomes a render failure, so its cluster keeps what it ran
// (keepRecorded) and lint and diff report it. Frozen old copies (a pending
// eviction's) were admitted when they were rendered and are left alone.
// skip, when not nil, marks the bindings whose objects check admitted
// already.
func restrictTargets(bindings []*Binding, check Check, skip []bool) {
	checked := map[*unstructured.Unstructured]*restrict.Refusal{} // objects are shared between a binding's clusters
	for bi, b := range bindings {
		if skip != nil && skip[bi] {
			continue
		}
		clear(checked)
		owned := false
		for i := range b.Targets {
			t := b.Targets[i] // ownTargets replaces b.Targets
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
			t = ownTargets(b, i, &owned)
			t.Failure = &RenderError{Template: b.Key, Source: b.Template.Source, Cluster: t.Cluster, Path: r.Path,
				Message: "refused by the restriction policy (" + r.Rule + "): " + r.Message}
			t.Error = t.Failure.Path + ": " + t.Failure.Message
			t.Object = nil
		}
	}
}
