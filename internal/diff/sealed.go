package diff

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/secrets/sealed"
)

// sealedNote describes an entry whose object is SOPS-encrypted on either
// side from the ciphertexts and the MAC alone — "encrypted Secret/demo/db
// changed (keys: password)" — never decrypting; "" for other objects.
// A value re-encrypted with the same plaintext reads as changed: sops
// draws a new IV, and only a key could tell.
func sealedNote(e *entry) string {
	b, h := sealedOrNil(e.base), sealedOrNil(e.head)
	if b == nil && h == nil {
		return ""
	}
	obj := h
	if obj == nil {
		obj = b
	}
	what := "encrypted " + workv1alpha1.KeyOf(obj).Display()
	switch {
	case b == nil && e.base != nil:
		return what + " is now encrypted"
	case h == nil && e.head != nil:
		return what + " is no longer encrypted"
	case b == nil:
		return what + " added"
	case h == nil:
		return what + " removed"
	}
	keys, mac := sealed.ChangedKeys(b.Object, h.Object)
	switch {
	case len(keys) > 0:
		return what + " changed (keys: " + strings.Join(keys, ", ") + ")"
	case mac:
		return what + " re-encrypted (no value changed place; the MAC changed)"
	}
	return what + " unchanged; metadata changed"
}

func sealedOrNil(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj != nil && sealed.IsEncrypted(obj.Object) {
		return obj
	}
	return nil
}

// redactSealed replaces, in place, an encrypted object's sops section and
// its committed document with tokens (ciphertext and age stanzas are
// noise to a reviewer; the note says what changed). token is redact's.
func redactSealed(obj, other *unstructured.Unstructured, token func(v, ov any, present bool) string) {
	if !sealed.IsEncrypted(obj.Object) {
		return
	}
	var ov any
	var odoc string
	present, docPresent := false, false
	if other != nil {
		ov, present = other.Object[sealed.MetadataKey]
		odoc, docPresent = other.GetAnnotations()[workv1alpha1.AnnotationSOPSDocument]
	}
	obj.Object[sealed.MetadataKey] = token(obj.Object[sealed.MetadataKey], ov, present && reflect.DeepEqual(obj.Object[sealed.MetadataKey], ov))
	if ann := obj.GetAnnotations(); ann != nil {
		if v, ok := ann[workv1alpha1.AnnotationSOPSDocument]; ok {
			ann[workv1alpha1.AnnotationSOPSDocument] = token(v, odoc, docPresent)
			obj.SetAnnotations(ann)
		}
	}
}
