package diff

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/override"
)

// The markers shown in place of Secret values.
const (
	RedactedChanged   = "<redacted: changed>"
	RedactedUnchanged = "<redacted: unchanged>"
	// Redacted replaces the values of a Secret that is added or removed.
	Redacted = "<redacted>"
)

// lastApplied is kubectl's annotation; on a Secret it holds the values.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Tokens stand in for the markers while diffing: a changed value gets a
// different token on each side, so the diff shows its line as changed even
// though both sides print the same marker. untoken swaps them back.
const (
	tokenChangedBase = "PROPAGIT-REDACTED-CHANGED-BASE-9d41c7e2"
	tokenChangedHead = "PROPAGIT-REDACTED-CHANGED-HEAD-9d41c7e2"
	tokenUnchanged   = "PROPAGIT-REDACTED-UNCHANGED-9d41c7e2"
	tokenGone        = "PROPAGIT-REDACTED-9d41c7e2"
)

var untokenizer = strings.NewReplacer(
	tokenChangedBase, RedactedChanged,
	tokenChangedHead, RedactedChanged,
	tokenUnchanged, RedactedUnchanged,
	tokenGone, Redacted,
)

func untoken(s string) string { return untokenizer.Replace(s) }

// isSecret reports whether obj is a core Secret.
func isSecret(obj *unstructured.Unstructured) bool {
	if obj == nil || obj.GetKind() != "Secret" {
		return false
	}
	v := obj.GetAPIVersion()
	return v == "v1" || !strings.Contains(v, "/")
}

// redactPair returns copies of a (base) and b (head) with every Secret value
// replaced by a token: unchanged when the other side holds the same value
// under the same key, changed otherwise, and gone when there is no other
// side. Objects that are not Secrets are returned as they are.
func redactPair(a, b *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured) {
	ra, rb := a, b
	if isSecret(a) {
		ra = a.DeepCopy()
		redact(ra, secretOrNil(b), tokenChangedBase)
	}
	if isSecret(b) {
		rb = b.DeepCopy()
		redact(rb, secretOrNil(a), tokenChangedHead)
	}
	return ra, rb
}

func secretOrNil(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if isSecret(obj) {
		return obj
	}
	return nil
}

// redact replaces, in place, the values of obj's data and stringData and
// its last-applied annotation, comparing each with other (nil: no other
// side). changed is the token for a value that differs.
func redact(obj, other *unstructured.Unstructured, changed string) {
	token := func(v, ov any, present bool) string {
		switch {
		case other == nil:
			return tokenGone
		case present && reflect.DeepEqual(v, ov):
			return tokenUnchanged
		}
		return changed
	}
	for _, field := range []string{"data", "stringData"} {
		v, found := obj.Object[field]
		if !found || v == nil {
			continue
		}
		var ov any
		if other != nil {
			ov = other.Object[field]
		}
		m, ok := v.(map[string]any)
		if !ok {
			obj.Object[field] = token(v, ov, ov != nil)
			continue
		}
		om, _ := ov.(map[string]any)
		for k, val := range m {
			oval, present := om[k]
			m[k] = token(val, oval, present)
		}
	}
	redactSealed(obj, other, token)
	ann := obj.GetAnnotations()
	if v, ok := ann[lastApplied]; ok {
		var ov string
		present := false
		if other != nil {
			ov, present = other.GetAnnotations()[lastApplied]
		}
		ann[lastApplied] = token(v, ov, present)
		obj.SetAnnotations(ann)
	}
}

// RedactChange returns c with its values replaced by the markers when c
// writes, or may write, a Secret's values: data, stringData, the
// last-applied annotation, or a field that holds them ("", "/metadata", …).
// Callers pass only the changes of core Secrets.
func RedactChange(c override.Change) override.Change {
	if !secretValuePath(c.Path) {
		return c
	}
	marker := RedactedChanged
	if c.Before == c.After {
		marker = RedactedUnchanged
	}
	if c.Before != "" {
		c.Before = marker
	}
	if c.After != "" {
		c.After = marker
	}
	return c
}

// secretValuePath reports whether the JSON pointer p reaches a Secret's
// values or one of their ancestors.
func secretValuePath(p string) bool {
	if p == "" || p == "/" {
		return true
	}
	for _, f := range []string{"/data", "/stringData", "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"} {
		if p == f || strings.HasPrefix(p, f+"/") || strings.HasPrefix(f, p+"/") {
			return true
		}
	}
	return false
}
