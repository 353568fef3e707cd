package override

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

func TestLabelsAndAnnotationsOverrider(t *testing.T) {
	item := func(operator string, kv ...string) []policyv1alpha1.LabelAnnotationOverrider {
		value := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			value[kv[i]] = kv[i+1]
		}
		return []policyv1alpha1.LabelAnnotationOverrider{{Operator: operator, Value: value}}
	}
	tests := []struct {
		name            string
		file            string
		ov              policyv1alpha1.Overriders
		wantLabels      any
		wantAnnotations any
		wantTemplate    any
	}{
		{
			name:            "labels add sets keys in metadata, not in the pod template",
			file:            "deployment.yaml",
			ov:              policyv1alpha1.Overriders{LabelsOverrider: item("add", "app", "shop", "tier", "front")},
			wantLabels:      map[string]any{"app": "shop", "tier": "front"},
			wantAnnotations: "<absent>",
			wantTemplate:    map[string]any{"app": "web"},
		},
		{
			name:            "annotations add creates the map and escapes / in keys",
			file:            "deployment.yaml",
			ov:              policyv1alpha1.Overriders{AnnotationsOverrider: item("add", "example.com/team", "a", "x~y", "b")},
			wantLabels:      map[string]any{"app": "web"},
			wantAnnotations: map[string]any{"example.com/team": "a", "x~y": "b"},
			wantTemplate:    map[string]any{"app": "web"},
		},
		{
			name:            "replace touches only existing keys",
			file:            "configmap.yaml",
			ov:              policyv1alpha1.Overriders{AnnotationsOverrider: item("replace", "example.com/owner", "team-b", "missing", "x")},
			wantLabels:      "<absent>",
			wantAnnotations: map[string]any{"example.com/owner": "team-b"},
			wantTemplate:    "<absent>",
		},
		{
			name:            "remove skips missing keys silently",
			file:            "configmap.yaml",
			ov:              policyv1alpha1.Overriders{AnnotationsOverrider: item("remove", "example.com/owner", "", "missing", "")},
			wantLabels:      "<absent>",
			wantAnnotations: map[string]any{},
			wantTemplate:    "<absent>",
		},
		{
			name:            "replace on a missing map does not create it",
			file:            "configmap.yaml",
			ov:              policyv1alpha1.Overriders{LabelsOverrider: item("replace", "app", "x")},
			wantLabels:      "<absent>",
			wantAnnotations: map[string]any{"example.com/owner": "team-a"},
			wantTemplate:    "<absent>",
		},
		{
			name:            "labels run before annotations",
			file:            "configmap.yaml",
			ov:              policyv1alpha1.Overriders{AnnotationsOverrider: item("remove", "example.com/owner", ""), LabelsOverrider: item("add", "a", "b")},
			wantLabels:      map[string]any{"a": "b"},
			wantAnnotations: map[string]any{},
			wantTemplate:    "<absent>",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, _, err := applyRule(t, tt.file, tt.ov)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			got := []any{
				valueAt(t, obj, "/metadata/labels"),
				valueAt(t, obj, "/metadata/annotations"),
				valueAt(t, obj, "/spec/template/metadata/labels"),
			}
			want := []any{tt.wantLabels, tt.wantAnnotations, tt.wantTemplate}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("labels, annotations, template labels mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLabelsOverriderPathEscapesSlash(t *testing.T) {
	_, res, err := applyRule(t, "deployment.yaml", policyv1alpha1.Overriders{
		LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: "add", Value: map[string]string{"app.kubernetes.io/name": "web"}}},
	})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	want := []Change{{
		Policy: "OverridePolicy.policy.karmada.io/default/p", Overrider: "labelsOverrider",
		Path: "/metadata/labels/app.kubernetes.io~1name", After: `"web"`,
	}}
	if diff := cmp.Diff(want, res.Changes); diff != "" {
		t.Errorf("changes mismatch (-want +got):\n%s", diff)
	}
}

func TestLabelsOverriderUnknownOperatorFails(t *testing.T) {
	_, _, err := applyRule(t, "deployment.yaml", policyv1alpha1.Overriders{
		LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: "merge", Value: map[string]string{"a": "b"}}},
	})
	want := "OverridePolicy.policy.karmada.io/default/p: overrideRules[0].overriders.labelsOverrider[0]: " +
		`failed to decode patch: invalid operation {"op":"merge","path":"/metadata/labels/a","value":"b"}: unsupported operation`
	if diff := cmp.Diff(want, errString(err)); diff != "" {
		t.Errorf("error mismatch (-want +got):\n%s", diff)
	}
}
