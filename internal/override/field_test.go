package override

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

func TestFieldOverrider(t *testing.T) {
	yamlOp := func(operator, subPath, value string) policyv1alpha1.YAMLPatchOp {
		o := policyv1alpha1.YAMLPatchOp{Operator: operator, SubPath: subPath}
		if value != "" {
			o.Value = raw(value)
		}
		return o
	}
	jsonOp := func(operator, subPath, value string) policyv1alpha1.JSONPatchOp {
		o := policyv1alpha1.JSONPatchOp{Operator: operator, SubPath: subPath}
		if value != "" {
			o.Value = raw(value)
		}
		return o
	}
	tests := []struct {
		name    string
		item    policyv1alpha1.FieldOverrider
		path    string
		want    any
		wantErr string
	}{
		{
			name: "yaml replace drops comments and re-serialises",
			item: policyv1alpha1.FieldOverrider{FieldPath: "/data/config.yaml", YAML: []policyv1alpha1.YAMLPatchOp{
				yamlOp("replace", "/key/key1", `"updated_value"`),
			}},
			path: "/data/config.yaml",
			want: "key:\n  key1: updated_value\nlist:\n- a\n- b\n",
		},
		{
			name: "yaml add and remove in order, keys sorted",
			item: policyv1alpha1.FieldOverrider{FieldPath: "/data/config.yaml", YAML: []policyv1alpha1.YAMLPatchOp{
				yamlOp("add", "/aaa", `{"num":1}`),
				yamlOp("remove", "/list/0", ""),
			}},
			path: "/data/config.yaml",
			want: "aaa:\n  num: 1\nkey:\n  key1: value\nlist:\n- b\n",
		},
		{
			name: "json replace gives compact JSON with key order kept",
			item: policyv1alpha1.FieldOverrider{FieldPath: "/data/config.json", JSON: []policyv1alpha1.JSONPatchOp{
				jsonOp("replace", "/key/key1", `"updated_value"`),
			}},
			path: "/data/config.json",
			want: `{"key":{"key1":"updated_value"},"z":1,"a":2}`,
		},
		{
			name: "json add appends a new key and escapes HTML characters",
			item: policyv1alpha1.FieldOverrider{FieldPath: "/data/config.json", JSON: []policyv1alpha1.JSONPatchOp{
				jsonOp("add", "/html", `"<b>"`),
			}},
			path: "/data/config.json",
			want: `{"key":{"key1":"value"},"z":1,"a":2,"html":"\u003cb\u003e"}`,
		},
		{
			name: "yaml wins when both lists are set",
			item: policyv1alpha1.FieldOverrider{
				FieldPath: "/data/config.yaml",
				YAML:      []policyv1alpha1.YAMLPatchOp{yamlOp("remove", "/list", "")},
				JSON:      []policyv1alpha1.JSONPatchOp{jsonOp("remove", "/nothing", "")},
			},
			path: "/data/config.yaml",
			want: "key:\n  key1: value\n",
		},
		{
			name: "missing field path fails",
			item: policyv1alpha1.FieldOverrider{FieldPath: "/data/absent.yaml", YAML: []policyv1alpha1.YAMLPatchOp{
				yamlOp("remove", "/a", ""),
			}},
			wantErr: `OverridePolicy.policy.karmada.io/default/p: overrideRules[0].overriders.fieldOverrider[0]: failed to read "/data/absent.yaml": path does not exist`,
		},
		{
			name: "non-string field fails",
			item: policyv1alpha1.FieldOverrider{FieldPath: "/data", JSON: []policyv1alpha1.JSONPatchOp{
				jsonOp("remove", "/a", ""),
			}},
			wantErr: `OverridePolicy.policy.karmada.io/default/p: overrideRules[0].overriders.fieldOverrider[0]: failed to read "/data": value is a object, not a string`,
		},
		{
			name: "missing sub path fails",
			item: policyv1alpha1.FieldOverrider{FieldPath: "/data/config.json", JSON: []policyv1alpha1.JSONPatchOp{
				jsonOp("remove", "/nothing", ""),
			}},
			wantErr: `OverridePolicy.policy.karmada.io/default/p: overrideRules[0].overriders.fieldOverrider[0]: failed to apply patch: ` +
				`error in remove for path: '/nothing': unable to remove nonexistent key: nothing: missing value`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, _, err := applyRule(t, "configmap.yaml", policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{tt.item}})
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Fatalf("error mismatch (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, valueAt(t, obj, tt.path)); diff != "" {
				t.Errorf("field mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldOverriderMissingPathIsErrMissingPath(t *testing.T) {
	_, _, err := applyRule(t, "configmap.yaml", policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{
		FieldPath: "/data/config.json",
		JSON:      []policyv1alpha1.JSONPatchOp{{Operator: "replace", SubPath: "/absent", Value: raw("1")}},
	}}})
	if !errors.Is(err, ErrMissingPath) {
		t.Errorf("errors.Is(%v, ErrMissingPath) = false, want true", err)
	}
}

func TestFieldOverriderRunsAfterAnnotationsAndBeforePlaintext(t *testing.T) {
	_, res, err := applyRule(t, "configmap.yaml", policyv1alpha1.Overriders{
		Plaintext: []policyv1alpha1.PlaintextOverrider{set("replace", "/data/config.json", `"{}"`)},
		FieldOverrider: []policyv1alpha1.FieldOverrider{{
			FieldPath: "/data/config.json",
			JSON:      []policyv1alpha1.JSONPatchOp{{Operator: "remove", SubPath: "/z"}},
		}},
		AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: "remove", Value: map[string]string{"example.com/owner": ""}}},
	})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	want := []Change{
		{
			Policy: "OverridePolicy.policy.karmada.io/default/p", Overrider: "annotationsOverrider",
			Path: "/metadata/annotations/example.com~1owner", Before: `"team-a"`,
		},
		{
			Policy: "OverridePolicy.policy.karmada.io/default/p", Overrider: "fieldOverrider", Path: "/data/config.json",
			Before: `"{\"key\":{\"key1\":\"value\"},\"z\":1,\"a\":2}"`, After: `"{\"key\":{\"key1\":\"value\"},\"a\":2}"`,
		},
		{
			Policy: "OverridePolicy.policy.karmada.io/default/p", Overrider: "plaintext", Path: "/data/config.json",
			Before: `"{\"key\":{\"key1\":\"value\"},\"a\":2}"`, After: `"{}"`,
		},
	}
	if diff := cmp.Diff(want, res.Changes); diff != "" {
		t.Errorf("changes mismatch (-want +got):\n%s", diff)
	}
}
