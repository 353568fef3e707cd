package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// The digest annotation (workv1alpha1.AnnotationAppliedDigest) makes an
// unchanged re-apply cost no request per object: an object whose every
// desired field, this annotation included, is already on the member is
// unchanged; one whose digest differs has changed. (Without it, a field
// removed from the desired object could not be told from a field that was
// never there, and every object would need a dry-run.)

// stampDigest sets workv1alpha1.AnnotationAppliedDigest on obj to the digest of obj without it.
func stampDigest(obj *unstructured.Unstructured) error {
	ann := obj.GetAnnotations()
	delete(ann, workv1alpha1.AnnotationAppliedDigest)
	if len(ann) == 0 {
		unstructured.RemoveNestedField(obj.Object, "metadata", "annotations")
	} else {
		obj.SetAnnotations(ann)
	}
	data, err := json.Marshal(obj.Object) // map keys are sorted: stable
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[workv1alpha1.AnnotationAppliedDigest] = "sha256:" + hex.EncodeToString(sum[:16])
	obj.SetAnnotations(ann)
	return nil
}

// contains reports whether every field of desired is on live with an equal
// value: labels and annotations as subsets, everything else outside metadata
// and status by the rules of subset. Server defaults and fields written by
// others are ignored. A false result only means "look closer": a value the
// apiserver normalises ("0.5" CPU stored as "500m") reads as different.
func contains(live, desired *unstructured.Unstructured) bool {
	if !subset(toAny(desired.GetLabels()), toAny(live.GetLabels())) ||
		!subset(toAny(desired.GetAnnotations()), toAny(live.GetAnnotations())) {
		return false
	}
	for k, v := range desired.Object {
		if k == "metadata" || k == "status" {
			continue
		}
		if !subset(v, live.Object[k]) {
			return false
		}
	}
	return true
}

// subset reports whether want is contained in got: maps key by key (a null
// value wants the key absent or null), lists element by element with equal
// lengths, numbers by value (YAML decoders give float64 where the apiserver's
// JSON gives int64), other scalars by equality.
func subset(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, present := g[k]
			if wv == nil {
				if present && gv != nil {
					return false
				}
				continue
			}
			if !present || !subset(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !subset(w[i], g[i]) {
				return false
			}
		}
		return true
	default:
		if wn, ok := number(want); ok {
			gn, ok := number(got)
			return ok && wn.equal(gn)
		}
		return want == got
	}
}

// num is a number an unstructured object can hold: an integer, or a float
// when isFloat.
type num struct {
	i       int64
	f       float64
	isFloat bool
}

// equal compares exactly: a float equals an integer only when it is
// integral and small enough for float64 to represent every integer near it.
func (a num) equal(b num) bool {
	switch {
	case !a.isFloat && !b.isFloat:
		return a.i == b.i
	case a.isFloat && b.isFloat:
		return a.f == b.f
	case a.isFloat:
		return floatIsInt(a.f, b.i)
	default:
		return floatIsInt(b.f, a.i)
	}
}

func floatIsInt(f float64, i int64) bool {
	const exact = 1 << 53
	return f >= -exact && f <= exact && f == float64(int64(f)) && int64(f) == i
}

func number(v any) (num, bool) {
	switch n := v.(type) {
	case int64:
		return num{i: n}, true
	case int:
		return num{i: int64(n)}, true
	case int32:
		return num{i: int64(n)}, true
	case float64:
		return num{f: n, isFloat: true}, true
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return num{i: i}, true
		}
		f, err := n.Float64()
		return num{f: f, isFloat: true}, err == nil
	}
	return num{}, false
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
