package workv1alpha1

import (
	"cmp"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ObjectKey identifies a template or an object on a member independent of
// its API version: an object keeps its identity across versions. Group is
// "" for the core group, as in Kubernetes; the String and Path forms write
// it "core".
type ObjectKey struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// coreGroup is how the core group is written in a key's String and Path.
const coreGroup = "core"

// KeyOf returns the ObjectKey of obj.
func KeyOf(obj *unstructured.Unstructured) ObjectKey {
	gv, _ := schema.ParseGroupVersion(obj.GetAPIVersion())
	return ObjectKey{Group: gv.Group, Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// GroupName is the group as String and Path write it: "core" for the core
// group.
func (k ObjectKey) GroupName() string {
	if k.Group == "" {
		return coreGroup
	}
	return k.Group
}

// String renders "Kind.group/namespace/name" ("Kind.group/name" when
// cluster-scoped), with the core group written "core"; ParseKey reverses
// it. Works and annotations stored in Git use this form.
func (k ObjectKey) String() string {
	if k.Namespace == "" {
		return fmt.Sprintf("%s.%s/%s", k.Kind, k.GroupName(), k.Name)
	}
	return fmt.Sprintf("%s.%s/%s/%s", k.Kind, k.GroupName(), k.Namespace, k.Name)
}

// Display is the one spelling of an object in messages and tables:
// "Kind.group/namespace/name", the group left out for the core group
// ("Service/demo/web") and the namespace for a cluster-scoped object
// ("ClusterRole.rbac.authorization.k8s.io/reader"). String is the stored
// form, which ParseKey reads back.
func (k ObjectKey) Display() string {
	id := k.Kind
	if k.Group != "" && k.Group != coreGroup {
		id += "." + k.Group
	}
	if k.Namespace == "" {
		return id + "/" + k.Name
	}
	return id + "/" + k.Namespace + "/" + k.Name
}

// DisplayKey is the Display form of a key in its String form (a
// template annotation), or s itself when it is not one.
func DisplayKey(s string) string {
	k, err := ParseKey(s)
	if err != nil {
		return s
	}
	return k.Display()
}

// DisplayRevision is the one spelling of a revision in messages and
// tables: its first 7 characters, as Git hosts show it, or "(no
// revision)" for none. Records keep the full hash.
func DisplayRevision(rev string) string {
	if rev == "" {
		return "(no revision)"
	}
	return ShortRevision(rev)
}

// ParseKey parses the String form of an ObjectKey.
func ParseKey(s string) (ObjectKey, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return ObjectKey{}, fmt.Errorf("invalid object key %q: want Kind.group/[namespace/]name", s)
	}
	kind, group, ok := strings.Cut(parts[0], ".")
	if !ok {
		return ObjectKey{}, fmt.Errorf("invalid object key %q: want Kind.group/[namespace/]name", s)
	}
	if group == coreGroup {
		group = ""
	}
	k := ObjectKey{Group: group, Kind: kind, Name: parts[len(parts)-1]}
	if len(parts) == 3 {
		k.Namespace = parts[1]
	}
	return k, nil
}

// Compare orders keys by namespace, kind, group (core first written
// "core"), name: the order of a Work's manifests and of every listing
// propagit prints.
func (k ObjectKey) Compare(o ObjectKey) int {
	return cmp.Or(strings.Compare(k.Namespace, o.Namespace), strings.Compare(k.Kind, o.Kind),
		strings.Compare(k.GroupName(), o.GroupName()), strings.Compare(k.Name, o.Name))
}

// Less reports whether k sorts before o (see Compare).
func (k ObjectKey) Less(o ObjectKey) bool { return k.Compare(o) < 0 }

// ClusterScopedDir is the folder of cluster-scoped objects in a rendered
// folder and a work branch.
const ClusterScopedDir = "_cluster"

// Path is where an object goes in a rendered folder or a work branch,
// relative to its cluster's folder:
// "<namespace or _cluster>/<kind, lower case>.<group>_<name>.yaml".
func (k ObjectKey) Path() string {
	ns := k.Namespace
	if ns == "" {
		ns = ClusterScopedDir
	}
	return fmt.Sprintf("%s/%s.%s_%s.yaml", ns, strings.ToLower(k.Kind), k.GroupName(), k.Name)
}

// ObjectRef identifies an object on a member: its key plus the API version
// it was applied with. Two refs name the same object when their keys are
// equal.
type ObjectRef struct {
	ObjectKey `json:",inline"`
	Version   string `json:"version,omitempty"`
}

// RefOf returns the ObjectRef of obj.
func RefOf(obj *unstructured.Unstructured) ObjectRef {
	gvk := obj.GroupVersionKind()
	return ObjectRef{ObjectKey: ObjectKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()},
		Version: gvk.Version}
}

// GroupVersionKind returns r's GroupVersionKind.
func (r ObjectRef) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}
