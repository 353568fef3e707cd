package apply

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// maxDriftFields bounds the field paths a Drift lists.
const maxDriftFields = 10

// Drift is a change made on the member, outside propagit, to an object
// propagit applied with the same content before.
type Drift struct {
	workv1alpha1.ObjectRef
	// Fields are the desired fields that differ on the member, as paths
	// ("spec.template.spec.containers[name=web].image"); empty when the
	// object was deleted.
	Fields []string
	// Manager is the field manager that owns the changed fields now, or the
	// last one that wrote the object; empty for a deletion.
	Manager string
	// Deleted: the object was deleted on the member.
	Deleted bool
	// Corrected: propagit put it back; false in the warn mode.
	Corrected bool
}

// driftMode returns obj's workv1alpha1.AnnotationDrift value, workv1alpha1.DriftModeCorrect when unset or
// unknown.
func driftMode(obj *unstructured.Unstructured) string {
	switch m := obj.GetAnnotations()[workv1alpha1.AnnotationDrift]; m {
	case workv1alpha1.DriftModeWarn, workv1alpha1.DriftModeIgnore:
		return m
	}
	return workv1alpha1.DriftModeCorrect
}

// noteDrift records on it the drift between its desired and live copies.
func (it *item) noteDrift(fieldManager string, corrected bool) {
	d := &Drift{ObjectRef: it.ref, Corrected: corrected}
	if it.live == nil {
		d.Deleted = true
	} else {
		var paths []path
		diffPaths(stripDigest(it.obj).Object, it.live.Object, nil, &paths)
		for _, p := range paths {
			d.Fields = append(d.Fields, p.String())
		}
		d.Manager = ownerOf(it.live, paths, fieldManager)
	}
	it.drift = d
}

// stripDigest returns obj without the digest annotation, which the member
// holds only after propagit wrote it.
func stripDigest(obj *unstructured.Unstructured) *unstructured.Unstructured {
	c := obj.DeepCopy()
	ann := c.GetAnnotations()
	delete(ann, workv1alpha1.AnnotationAppliedDigest)
	c.SetAnnotations(ann)
	return c
}

// segment is one step of a path: a map key, or a list index with the name
// of the element when it has one (containers are keyed by name).
type segment struct {
	key   string
	index int
	name  string
}

type path []segment

// String formats p like "spec.containers[name=web].image".
func (p path) String() string {
	var b strings.Builder
	for _, s := range p {
		switch {
		case s.key != "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		case s.name != "":
			fmt.Fprintf(&b, "[name=%s]", s.name)
		default:
			fmt.Fprintf(&b, "[%d]", s.index)
		}
	}
	return b.String()
}

// diffPaths appends to out the paths at which want is not contained in got,
// by the rules of subset, outside status and the server's metadata. A list
// whose length differs is one path.
func diffPaths(want, got any, at path, out *[]path) {
	if len(*out) >= maxDriftFields {
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g, _ := got.(map[string]any)
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if len(at) == 0 && k == "status" {
				continue
			}
			gv, present := g[k]
			if w[k] == nil {
				if present && gv != nil {
					*out = append(*out, append(slices.Clone(at), segment{key: k}))
				}
				continue
			}
			diffPaths(w[k], gv, append(slices.Clone(at), segment{key: k}), out)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			*out = append(*out, at)
			return
		}
		for i := range w {
			s := segment{index: i}
			if m, ok := w[i].(map[string]any); ok {
				s.name, _ = m["name"].(string)
			}
			diffPaths(w[i], g[i], append(slices.Clone(at), s), out)
		}
	default:
		if !subset(want, got) {
			*out = append(*out, at)
		}
	}
}

// ownerOf names the field manager, other than propagit's own, that owns the
// first drifted path on live; when no entry owns it (a value an Update
// overwrote without taking it, a list element replaced), the manager that
// wrote the object last.
func ownerOf(live *unstructured.Unstructured, paths []path, own string) string {
	entries := live.GetManagedFields()
	if len(paths) > 0 {
		for _, e := range entries {
			if e.Manager != own && e.Subresource == "" && owns(e, paths[0]) {
				return e.Manager
			}
		}
	}
	last, lastTime := "", metav1.Time{}
	for _, e := range entries {
		if e.Manager == own || e.Subresource != "" || e.Time == nil {
			continue
		}
		if last == "" || lastTime.Before(e.Time) {
			last, lastTime = e.Manager, *e.Time
		}
	}
	return last
}

// owns reports whether the field set of e holds p: map keys are "f:<key>",
// named list elements `k:{"name":"<name>"}`.
func owns(e metav1.ManagedFieldsEntry, p path) bool {
	if e.FieldsV1 == nil {
		return false
	}
	var set map[string]any
	if err := json.Unmarshal(e.FieldsV1.Raw, &set); err != nil {
		return false
	}
	for _, s := range p {
		var k string
		switch {
		case s.key != "":
			k = "f:" + s.key
		case s.name != "":
			k = `k:{"name":` + strconv.Quote(s.name) + `}`
		default:
			return false
		}
		next, ok := set[k].(map[string]any)
		if !ok {
			return false
		}
		set = next
	}
	return true
}

// retainReplicas keeps the member's spec.replicas when something on the
// member scales the object: Karmada's retain-replicas label asks for it,
// and a manager that wrote replicas through the scale subresource (an HPA,
// KEDA, kubectl scale) owns them. Such a change is not drift, and a
// re-apply must not undo it.
func retainReplicas(desired, live *unstructured.Unstructured, own string) {
	if live == nil {
		return
	}
	replicas, found, err := unstructured.NestedFieldNoCopy(live.Object, "spec", "replicas")
	if !found || err != nil {
		return
	}
	if _, wants, _ := unstructured.NestedFieldNoCopy(desired.Object, "spec", "replicas"); !wants {
		return
	}
	if desired.GetLabels()[workv1alpha1.LabelRetainReplicas] != "true" && !scaledByOther(live, own) {
		return
	}
	_ = unstructured.SetNestedField(desired.Object, replicas, "spec", "replicas")
}

// scaledByOther reports whether a manager other than own owns spec.replicas
// of live through the scale subresource.
func scaledByOther(live *unstructured.Unstructured, own string) bool {
	replicas := path{{key: "spec"}, {key: "replicas"}}
	for _, e := range live.GetManagedFields() {
		if e.Manager != own && e.Subresource == "scale" && owns(e, replicas) {
			return true
		}
	}
	return false
}
