package render

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Key identifies a template or a rendered object independent of its version:
// kind, group ("core" for the core group), namespace ("" when cluster-scoped)
// and name.
type Key struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// KeyOf returns the Key of obj.
func KeyOf(obj *unstructured.Unstructured) Key {
	gv, _ := schema.ParseGroupVersion(obj.GetAPIVersion())
	g := gv.Group
	if g == "" {
		g = "core"
	}
	return Key{Group: g, Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// String renders "Kind.group/namespace/name" ("Kind.group/name" when
// cluster-scoped); ParseKey reverses it.
func (k Key) String() string {
	if k.Namespace == "" {
		return fmt.Sprintf("%s.%s/%s", k.Kind, k.Group, k.Name)
	}
	return fmt.Sprintf("%s.%s/%s/%s", k.Kind, k.Group, k.Namespace, k.Name)
}

// ParseKey parses the String form of a Key.
func ParseKey(s string) (Key, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return Key{}, fmt.Errorf("invalid template key %q", s)
	}
	kind, group, ok := strings.Cut(parts[0], ".")
	if !ok {
		return Key{}, fmt.Errorf("invalid template key %q: want Kind.group/[namespace/]name", s)
	}
	k := Key{Group: group, Kind: kind, Name: parts[len(parts)-1]}
	if len(parts) == 3 {
		k.Namespace = parts[1]
	}
	return k, nil
}

// Less orders keys by namespace, kind, group, name: the stable order of every
// listing propagit prints.
func (k Key) Less(o Key) bool {
	if k.Namespace != o.Namespace {
		return k.Namespace < o.Namespace
	}
	if k.Kind != o.Kind {
		return k.Kind < o.Kind
	}
	if k.Group != o.Group {
		return k.Group < o.Group
	}
	return k.Name < o.Name
}

// Path is where an object goes in a rendered folder, relative to the
// cluster's folder: "<namespace or _cluster>/<kind>.<group>_<name>.yaml".
func (k Key) Path() string {
	ns := k.Namespace
	if ns == "" {
		ns = "_cluster"
	}
	return fmt.Sprintf("%s/%s.%s_%s.yaml", ns, strings.ToLower(k.Kind), k.Group, k.Name)
}
