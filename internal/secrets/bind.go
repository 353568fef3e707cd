package secrets

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// bound refuses to decrypt plain into obj unless obj is the object the
// document was committed as: same apiVersion, kind, namespace and name.
// Without it, any object carrying a document (annotation and sops section
// put there by an override) would receive its values: a committer could
// copy another team's Secret into a namespace of their own. A document
// without a namespace is bound to "default", the namespace load gives it.
// An identity field that is itself encrypted is refused, never quoted.
func bound(plain *Plain, obj *unstructured.Unstructured) error {
	for _, p := range plain.Paths {
		if p[0] == "apiVersion" || p[0] == "kind" || p[0] == "metadata" && (len(p) == 1 || p[1] == "name" || p[1] == "namespace") {
			return fmt.Errorf("%w: the document's %v is encrypted, so it cannot be bound to an object", ErrRelocated, dotted(p))
		}
	}
	for _, f := range [][]string{{"apiVersion"}, {"kind"}, {"metadata", "name"}, {"metadata", "namespace"}} {
		if _, _, err := unstructured.NestedString(plain.Object, f...); err != nil {
			return fmt.Errorf("%w: the document's %s is not a string", ErrRelocated, dotted(f))
		}
	}
	doc := &unstructured.Unstructured{Object: plain.Object}
	ns := doc.GetNamespace()
	if ns == "" && obj.GetNamespace() == "default" {
		ns = "default"
	}
	want := identity(doc.GetAPIVersion(), doc.GetKind(), ns, doc.GetName())
	if got := identity(obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName()); got != want {
		return fmt.Errorf("%w: the document was committed as %s and is carried by %s; a document decrypts only into the object it was committed as", ErrRelocated, want, got)
	}
	return nil
}

// identity prints an object's identity, quoting each part so that odd
// characters in a hostile name stay visible.
func identity(apiVersion, kind, ns, name string) string {
	return strconv.Quote(apiVersion) + " " + strconv.Quote(kind) + " " + strconv.Quote(ns+"/"+name)
}

// stringValues makes every value of a Secret's data and stringData a
// string: a decrypted (or committed) unquoted number or boolean becomes
// its text rather than reaching the API server, whose error would quote
// it. A list or mapping is left for the API server to refuse: its error
// names the type, not the items.
func stringValues(obj map[string]any) {
	for _, field := range []string{"data", "stringData"} {
		m, _ := obj[field].(map[string]any)
		for k, v := range m {
			switch x := v.(type) {
			case int64:
				m[k] = strconv.FormatInt(x, 10)
			case float64:
				m[k] = strconv.FormatFloat(x, 'f', -1, 64)
			case bool:
				m[k] = strconv.FormatBool(x)
			case int:
				m[k] = strconv.Itoa(x)
			}
		}
	}
}
