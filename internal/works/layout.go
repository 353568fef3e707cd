package works

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// WorkFile is the name of the file, inside a cluster's folder, that holds
// the Work without its manifests.
const WorkFile = "work.yaml"

// ObjectPath returns where obj goes inside its cluster's folder, on the
// work branch and in what `propagit render --out` writes (see
// workv1alpha1.ObjectKey.Path).
func ObjectPath(obj *unstructured.Unstructured) string {
	return workv1alpha1.KeyOf(obj).Path()
}

// workFile is the content of WorkFile: the Work's identity, annotations
// and spec without manifests, and nothing else (no status, no server
// fields).
type workFile struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Metadata   workFileMeta          `json:"metadata"`
	Spec       workv1alpha1.WorkSpec `json:"spec"`
}

type workFileMeta struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// validSegment reports whether s can be one path segment of the branch.
func validSegment(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00")
}

// ValidateCluster refuses a cluster name that is not a DNS subdomain, the
// rule for Cluster names; such a name is also a safe folder, ref and
// object name.
func ValidateCluster(name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("invalid cluster name %q: %s", name, errs[0])
	}
	return nil
}

// EncodeHead returns the content of WorkFile for w.
func EncodeHead(w *workv1alpha1.Work) ([]byte, error) {
	cluster := w.Spec.Cluster
	if err := ValidateCluster(cluster); err != nil {
		return nil, err
	}
	spec := w.Spec
	spec.Manifests = nil
	wf := workFile{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "Work", Metadata: workFileMeta{Name: cluster, Annotations: OwnAnnotations(w.Annotations)}, Spec: spec}
	head, err := yaml.Marshal(wf)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the work of %s: %w", cluster, err)
	}
	return head, nil
}

// EncodeManifest returns the path of a manifest's file in its cluster's
// folder and its content: YAML with sorted keys, the bytes YAMLEncoder
// gives the object (what `propagit render --out` writes).
func EncodeManifest(m *runtime.RawExtension) (string, []byte, error) {
	obj, err := workv1alpha1.DecodeManifest(m)
	if err != nil {
		return "", nil, err
	}
	p := ObjectPath(obj)
	if !validSegment(obj.GetName()) || (obj.GetNamespace() != "" && !validSegment(obj.GetNamespace())) {
		return "", nil, fmt.Errorf("invalid name or namespace for %s", p)
	}
	data, err := toYAML(obj.Object, func() ([]byte, error) { return json.Marshal(obj.Object) })
	if err != nil {
		return "", nil, fmt.Errorf("failed to encode %s: %w", p, err)
	}
	return p, data, nil
}

// SourceRevision returns the source revision the WorkFile head records;
// false when head does not decode.
func SourceRevision(head []byte) (string, bool) {
	var wf workFile
	if err := yaml.Unmarshal(head, &wf); err != nil {
		return "", false
	}
	return wf.Spec.SourceRevision, true
}

// DecodeWork rebuilds the Work of cluster from the files of its folder
// (paths relative to it). Manifests come back as JSON, sorted by namespace,
// kind, group and name.
func DecodeWork(cluster string, files map[string][]byte) (*workv1alpha1.Work, error) {
	head, ok := files[WorkFile]
	if !ok {
		return nil, fmt.Errorf("work %s: missing %s", cluster, WorkFile)
	}
	// Not strict: a newer format may add fields, and the reader must still
	// see its formatVersion to refuse it clearly.
	var wf workFile
	if err := yaml.Unmarshal(head, &wf); err != nil {
		return nil, fmt.Errorf("work %s: failed to decode %s: %w", cluster, WorkFile, err)
	}
	w := NewWork(cluster, wf.Spec)
	w.Annotations = wf.Metadata.Annotations
	var objs []*unstructured.Unstructured
	for p, data := range files {
		if p == WorkFile || path.Ext(p) != ".yaml" {
			continue
		}
		raw, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("work %s: failed to decode %s: %w", cluster, p, err)
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("work %s: failed to decode %s: %w", cluster, p, err)
		}
		objs = append(objs, obj)
	}
	SortObjects(objs)
	for _, obj := range objs {
		raw, err := obj.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("work %s: failed to encode %s: %w", cluster, ObjectPath(obj), err)
		}
		w.Spec.Manifests = append(w.Spec.Manifests, runtime.RawExtension{Raw: raw})
	}
	return w, nil
}

// NewWork returns a Work named after cluster with spec.
func NewWork(cluster string, spec workv1alpha1.WorkSpec) *workv1alpha1.Work {
	w := &workv1alpha1.Work{Spec: spec}
	w.APIVersion = workv1alpha1.GroupVersion.String()
	w.Kind = "Work"
	w.Name = cluster
	w.Spec.Cluster = cluster
	return w
}

// SortObjects orders objects by namespace, kind, group and name, the
// order of Work manifests.
func SortObjects(objs []*unstructured.Unstructured) {
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		return workv1alpha1.KeyOf(a).Compare(workv1alpha1.KeyOf(b))
	})
}

// SameContent reports whether a and b hold the same Work apart from the
// source revision: same format version, suspension, propagit's annotations
// and manifests (compared as JSON values, so key order and whitespace do not
// matter).
func SameContent(a, b *workv1alpha1.Work) (bool, error) {
	if a.Spec.FormatVersion != b.Spec.FormatVersion || a.Spec.Suspended != b.Spec.Suspended ||
		len(a.Spec.Manifests) != len(b.Spec.Manifests) || !maps.Equal(OwnAnnotations(a.Annotations), OwnAnnotations(b.Annotations)) {
		return false, nil
	}
	for i := range a.Spec.Manifests {
		if ra, rb := a.Spec.Manifests[i].Raw, b.Spec.Manifests[i].Raw; ra != nil && string(ra) == string(rb) {
			continue // the same bytes: no need to decode and re-encode both
		}
		x, err := canonicalJSON(&a.Spec.Manifests[i])
		if err != nil {
			return false, err
		}
		y, err := canonicalJSON(&b.Spec.Manifests[i])
		if err != nil {
			return false, err
		}
		if x != y {
			return false, nil
		}
	}
	return true, nil
}

// OwnAnnotations returns the annotations a store records with a Work:
// propagit's own (propagit.io/), never those other tools set on a Work
// custom resource, and not the store's own bookkeeping
// (AnnotationRecordedSequence). nil when there are none.
func OwnAnnotations(ann map[string]string) map[string]string {
	var out map[string]string
	for k, v := range ann {
		if strings.HasPrefix(k, workv1alpha1.AnnotationPrefix) && !storeBookkeeping[k] {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// storeBookkeeping are the annotations a store writes for itself, never
// part of a Work's content.
var storeBookkeeping = map[string]bool{
	workv1alpha1.AnnotationRecordedSequence: true,
	workv1alpha1.AnnotationChunks:           true,
	workv1alpha1.AnnotationChunk:            true,
	workv1alpha1.AnnotationManifestsDigest:  true,
}

// canonicalJSON re-encodes a manifest with sorted keys and no spacing.
func canonicalJSON(m *runtime.RawExtension) (string, error) {
	obj, err := workv1alpha1.DecodeManifest(m)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(obj.Object)
	return string(b), err
}
