package render

import (
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// stamp adds propagit's labels and annotations to obj.
func stamp(obj *unstructured.Unstructured, b *Binding, replicas *int32) {
	metaMap(obj, "labels")[workv1alpha1.LabelManaged] = "true"
	conflict := conflictResolution(obj, b)
	ann := metaMap(obj, "annotations")
	ann[workv1alpha1.AnnotationTemplate] = b.Key.String()
	if o := b.Template.Chart; o != nil {
		ann[workv1alpha1.AnnotationHelmChart] = o.Chart.Namespace + "/" + o.Chart.Name
		ann[workv1alpha1.AnnotationHelmTemplate] = o.Template
	}
	if b.Policy != nil {
		if b.Policy.ClusterScoped {
			ann[workv1alpha1.AnnotationCPPName] = b.Policy.Name
		} else {
			ann[workv1alpha1.AnnotationPPName] = b.Policy.Name
			ann[workv1alpha1.AnnotationPPNamespace] = b.Policy.Namespace
		}
	}
	if replicas != nil {
		ann[workv1alpha1.AnnotationScheduledReplicas] = strconv.Itoa(int(*replicas))
	}
	if b.AffinityName != "" {
		ann[workv1alpha1.AnnotationAffinityName] = b.AffinityName
	}
	if len(b.DependencyOf) > 0 {
		ann[workv1alpha1.AnnotationDependencyOf] = strings.Join(b.DependencyOf, ",")
	}
	if b.Preserve {
		ann[workv1alpha1.AnnotationPreserveResourcesOnDeletion] = "true"
	}
	if _, set := ann[workv1alpha1.AnnotationDrift]; !set && b.DriftMode != "" {
		ann[workv1alpha1.AnnotationDrift] = b.DriftMode
	}
	if !(b.Policy == nil && isNamespace(obj)) {
		// Auto-propagated Namespaces carry no conflict resolution in Karmada:
		// a namespace that already exists on a member is never adopted.
		ann[workv1alpha1.AnnotationConflict] = conflict
	}
}

// stampEviction marks obj as the old copy kept on a cluster the template
// was evicted from; the next render reads the eviction back from it.
func stampEviction(obj *unstructured.Unstructured, e *Eviction) {
	ann := metaMap(obj, "annotations")
	ann[workv1alpha1.AnnotationEvictedAt] = e.Since.UTC().Format(time.RFC3339)
	ann[workv1alpha1.AnnotationPurgeMode] = e.PurgeMode
	if e.Reason != "" {
		ann[workv1alpha1.AnnotationEvictedReason] = e.Reason
	}
	if !e.Until.IsZero() {
		ann[workv1alpha1.AnnotationEvictedUntil] = e.Until.UTC().Format(time.RFC3339)
	}
}

// metaMap returns metadata.<field> of obj as the object's own map (edits
// land in place, with no copy), creating it when missing. Values written
// into it must be strings.
func metaMap(obj *unstructured.Unstructured, field string) map[string]any {
	meta, ok := obj.Object["metadata"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		obj.Object["metadata"] = meta
	}
	m, ok := meta[field].(map[string]any)
	if !ok {
		m = map[string]any{}
		meta[field] = m
	}
	return m
}

// conflictResolution is the template annotation when it is overwrite or
// abort, else the policy's field (Karmada's mergeConflictResolution).
func conflictResolution(obj *unstructured.Unstructured, b *Binding) string {
	field, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "annotations")
	ann, _ := field.(map[string]any)
	v, _ := ann[workv1alpha1.AnnotationConflict].(string)
	switch v {
	case "overwrite", "abort":
		return v
	}
	if b.Overwrite {
		return "overwrite"
	}
	return "abort"
}

// prune removes the fields Karmada never propagates: server-owned metadata,
// status, and per-kind generated fields.
func prune(obj *unstructured.Unstructured) {
	for _, f := range []string{"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
		"generation", "managedFields", "resourceVersion", "selfLink", "uid", "ownerReferences", "finalizers"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(obj.Object, "status")
	annField, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "annotations")
	ann, _ := annField.(map[string]any) // edited in place
	switch obj.GetKind() {
	case "Deployment":
		delete(ann, "deployment.kubernetes.io/revision")
		delete(ann, "deployment.kubernetes.io/revision-history")
	case "Job":
		pruneJob(obj)
	case "Service":
		if ip, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP"); ip != "None" {
			unstructured.RemoveNestedField(obj.Object, "spec", "clusterIP")
			unstructured.RemoveNestedField(obj.Object, "spec", "clusterIPs")
		}
	case "PersistentVolumeClaim":
		delete(ann, "volume.kubernetes.io/selected-node")
	case "Secret":
		if t, _, _ := unstructured.NestedString(obj.Object, "type"); t == "kubernetes.io/service-account-token" {
			delete(ann, "kubernetes.io/service-account.uid")
			unstructured.RemoveNestedField(obj.Object, "data")
		}
	}
	if ann != nil && len(ann) == 0 {
		unstructured.RemoveNestedField(obj.Object, "metadata", "annotations")
	}
}

func pruneJob(obj *unstructured.Unstructured) {
	unstructured.RemoveNestedField(obj.Object, "spec", "ttlSecondsAfterFinished")
	if manual, _, _ := unstructured.NestedBool(obj.Object, "spec", "manualSelector"); manual {
		return
	}
	for _, l := range []string{"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name"} {
		unstructured.RemoveNestedField(obj.Object, "spec", "selector", "matchLabels", l)
		unstructured.RemoveNestedField(obj.Object, "spec", "template", "metadata", "labels", l)
	}
}
