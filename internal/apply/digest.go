package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AnnotationDigest holds a digest of the desired object propagit last
// applied. With it an unchanged re-apply needs no request per object: an
// object whose every desired field, this annotation included, is already on
// the member is unchanged; one whose digest differs has changed. (Without it,
// a field removed from the desired object could not be told from a field
// that was never there, and every object would need a dry-run.)
const AnnotationDigest = "propagit.io/applied-digest"

// stampDigest sets AnnotationDigest on obj to the digest of obj without it.
func stampDigest(obj *unstructured.Unstructured) error {
	ann := obj.GetAnnotations()
	delete(ann, AnnotationDigest)
	obj.SetAnnotations(ann)
	data, err := json.Marshal(obj.Object) // map keys are sorted: stable
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationDigest] = "sha256:" + hex.EncodeToString(sum[:16])
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
			return ok && wn == gn
		}
		return want == got
	}
}

// number returns v as a float64 when it is a number an unstructured object
// can hold.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
