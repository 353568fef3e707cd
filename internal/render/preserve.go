package render

import (
	"bytes"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/jsonpath"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Reflected is, per cluster and template, the object's status as the
// cluster last reported it (workv1alpha1.ObjectResult.Status): what
// failover's statePreservation reads.
type Reflected map[string]map[workv1alpha1.ObjectKey]map[string]any

// of returns, per cluster, the reported status of the template key.
func (r Reflected) of(key workv1alpha1.ObjectKey) map[string]map[string]any {
	var out map[string]map[string]any
	for cluster, templates := range r {
		if st, ok := templates[key]; ok {
			if out == nil {
				out = map[string]map[string]any{}
			}
			out[cluster] = st
		}
	}
	return out
}

// preserve evaluates the statePreservation rules on the status the evicted
// cluster reported (Karmada's JSONPath starts at the status: {.replicas}),
// giving the labels to put on the copies the template moves to. A rule
// whose path finds nothing, or whose value is not a label value, gives no
// label.
func preserve(sp *policyv1alpha1.StatePreservation, status map[string]any) map[string]string {
	if sp == nil || status == nil {
		return nil
	}
	var out map[string]string
	for _, r := range sp.Rules {
		jp := jsonpath.New(r.AliasLabelName)
		if jp.Parse(r.JSONPath) != nil {
			continue
		}
		var buf bytes.Buffer
		if jp.Execute(&buf, status) != nil {
			continue
		}
		v := buf.String()
		if v == "" || len(validation.IsValidLabelValue(v)) > 0 {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[r.AliasLabelName] = v
	}
	return out
}

// injectPreserved puts the labels statePreservation kept on b's copies: on
// the clusters a failover of this render moved the template to, the labels
// of that eviction; on every other cluster, those its previous copy
// carried (AnnotationPreservedLabels), so they stay while the template
// stays there. Rendered objects and targets may be shared: a copy is
// changed only after a deep copy, in a target of b's own.
func injectPreserved(b *Binding, prev *PreviousTemplate) {
	fresh := map[string]string{}
	for _, e := range b.Evictions {
		if e.Ended == "" {
			for k, v := range e.PreservedLabels {
				fresh[k] = v
			}
		}
	}
	if len(fresh) == 0 && (prev == nil || !prev.preserved) {
		return // nothing to preserve
	}
	var before map[string]bool
	if prev != nil {
		before = map[string]bool{}
		for _, tc := range prev.Placement.Clusters {
			before[tc.Name] = true
		}
	}
	owned := false
	for i := range b.Targets {
		t := b.Targets[i] // ownTargets replaces b.Targets
		if t.Object == nil || t.Evicted != nil || t.Kept {
			continue
		}
		labels := map[string]string{}
		if prev != nil {
			if old := prev.Objects[t.Cluster]; old != nil {
				if kept := annotation(old, workv1alpha1.AnnotationPreservedLabels); kept != "" {
					oldLabels := old.GetLabels()
					for _, k := range strings.Split(kept, ",") {
						if v, ok := oldLabels[k]; ok && k != "" {
							labels[k] = v
						}
					}
				}
			}
		}
		if len(fresh) > 0 && !before[t.Cluster] {
			for k, v := range fresh {
				labels[k] = v
			}
		}
		if len(labels) == 0 {
			continue
		}
		t = ownTargets(b, i, &owned)
		obj := t.Object.DeepCopy()
		keys := make([]string, 0, len(labels))
		for k, v := range labels {
			metaMap(obj, "labels")[k] = v
			keys = append(keys, k)
		}
		slices.Sort(keys)
		metaMap(obj, "annotations")[workv1alpha1.AnnotationPreservedLabels] = strings.Join(keys, ",")
		t.Object = obj
	}
}
