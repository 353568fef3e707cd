package load

import (
	"fmt"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// builtinFieldFindings checks a template of a built-in kind (one client-go
// knows) field by field against its Go type and returns a Finding at the
// line of each unknown field outside metadata (metadata is checked apart)
// and the sops section of an encrypted object (read by propagit).
// The API server drops such a field with a warning, so `replicaz: 2`
// would ship as a Deployment with the default replicas: a finding, not a
// load error, since the object still applies.
func builtinFieldFindings(src Source, n *yaml.Node, gvk schema.GroupVersionKind, namespace, name string) []Finding {
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil // a custom resource, or a version client-go does not know
	}
	w := newStrictWalker()
	w.walk(n, reflect.TypeOf(obj).Elem(), "")
	var out []Finding
	for _, i := range w.issues {
		if !strings.HasPrefix(i.msg, "unknown field") || i.field == "metadata" || i.field == "sops" || strings.HasPrefix(i.field, "metadata.") {
			continue
		}
		out = append(out, Finding{Source: Source{Path: src.Path, Line: i.line}, Message: fmt.Sprintf(
			"%s: %s: %s; the API server drops it", describe(gvk.Group, gvk.Kind, namespace, name), i.field, i.msg)})
	}
	return out
}
