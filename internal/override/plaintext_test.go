package override

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

func TestPlaintext(t *testing.T) {
	const args = "/spec/template/spec/containers/0/args"
	tests := []struct {
		name    string
		ops     []policyv1alpha1.PlaintextOverrider
		path    string
		want    any
		wantErr string
	}{
		{
			name: "replace an existing field",
			ops:  []policyv1alpha1.PlaintextOverrider{set("replace", "/spec/replicas", "5")},
			path: "/spec/replicas",
			want: int64(5),
		},
		{
			name: "add overwrites an existing member",
			ops:  []policyv1alpha1.PlaintextOverrider{set("add", "/metadata/labels/app", `"shop"`)},
			path: "/metadata/labels",
			want: map[string]any{"app": "shop"},
		},
		{
			name: "add with - appends to an array",
			ops:  []policyv1alpha1.PlaintextOverrider{set("add", args+"/-", `"--last"`)},
			path: args,
			want: []any{"--port=80", "--verbose", "--last"},
		},
		{
			name: "add at an index inserts",
			ops:  []policyv1alpha1.PlaintextOverrider{set("add", args+"/0", `"--first"`)},
			path: args,
			want: []any{"--first", "--port=80", "--verbose"},
		},
		{
			name: "negative index counts from the end",
			ops:  []policyv1alpha1.PlaintextOverrider{set("replace", args+"/-1", `"--quiet"`)},
			path: args,
			want: []any{"--port=80", "--quiet"},
		},
		{
			name: "entries of one rule apply in order, so a later add finds the parent an earlier one made",
			ops: []policyv1alpha1.PlaintextOverrider{
				set("add", "/spec/template/metadata/annotations", `{}`),
				set("add", "/spec/template/metadata/annotations/x", `"1"`),
			},
			path: "/spec/template/metadata/annotations",
			want: map[string]any{"x": "1"},
		},
		{
			name: "remove an existing field",
			ops:  []policyv1alpha1.PlaintextOverrider{set("remove", "/spec/replicas", "")},
			path: "/spec/replicas",
			want: "<absent>",
		},
		{
			name: "add without value adds null",
			ops:  []policyv1alpha1.PlaintextOverrider{set("add", "/spec/paused", "")},
			path: "/spec/paused",
			want: nil,
		},
		{
			name: "add does not create a missing parent",
			ops:  []policyv1alpha1.PlaintextOverrider{set("add", "/spec/template/metadata/annotations/x", `"1"`)},
			wantErr: "OverridePolicy.policy.karmada.io/default/p: overrideRules[0].overriders.plaintext: failed to apply patch: " +
				`add operation does not apply: doc is missing path: "/spec/template/metadata/annotations/x": missing value`,
		},
		{
			name: "replace of a missing path fails",
			ops:  []policyv1alpha1.PlaintextOverrider{set("replace", "/spec/foo", `1`)},
			wantErr: "OverridePolicy.policy.karmada.io/default/p: overrideRules[0].overriders.plaintext: failed to apply patch: " +
				"replace operation does not apply: doc is missing key: /spec/foo: missing value",
		},
		{
			name: "remove of a missing path fails",
			ops:  []policyv1alpha1.PlaintextOverrider{set("remove", "/spec/foo", "")},
			wantErr: "OverridePolicy.policy.karmada.io/default/p: overrideRules[0].overriders.plaintext: failed to apply patch: " +
				"error in remove for path: '/spec/foo': unable to remove nonexistent key: foo: missing value",
		},
		{
			name: "a failing later entry fails the whole rule",
			ops: []policyv1alpha1.PlaintextOverrider{
				set("replace", "/spec/replicas", "5"),
				set("remove", "/spec/foo", ""),
			},
			wantErr: "OverridePolicy.policy.karmada.io/default/p: overrideRules[0].overriders.plaintext: failed to apply patch: " +
				"error in remove for path: '/spec/foo': unable to remove nonexistent key: foo: missing value",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, _, err := applyRule(t, "deployment.yaml", plain(tt.ops...))
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Fatalf("error mismatch (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, valueAt(t, obj, tt.path)); diff != "" {
				t.Errorf("value mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlaintextMissingPathIsErrMissingPath(t *testing.T) {
	for _, o := range []policyv1alpha1.PlaintextOverrider{
		set("add", "/spec/template/metadata/annotations/x", `"1"`),
		set("replace", "/spec/foo", "1"),
		set("remove", "/spec/foo", ""),
		set("replace", "/spec/template/spec/containers/9/image", `"x"`),
	} {
		_, _, err := applyRule(t, "deployment.yaml", plain(o))
		var ruleErr *RuleError
		if !errors.Is(err, ErrMissingPath) || !errors.As(err, &ruleErr) {
			t.Errorf("%s %s: error %v is not a *RuleError matching ErrMissingPath", o.Operator, o.Path, err)
		}
	}
}

func TestPlaintextRecordsEachEntry(t *testing.T) {
	_, res, err := applyRule(t, "deployment.yaml", plain(
		set("replace", "/spec/replicas", "5"),
		set("replace", "/spec/replicas", "6"),
		set("add", "/spec/template/spec/containers/0/args/0", `"--first"`),
		set("remove", "/metadata/labels/app", ""),
		set("add", "/spec/template/spec/containers/0/args/-", `"--last"`),
	))
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	p := "OverridePolicy.policy.karmada.io/default/p"
	want := []Change{
		{Policy: p, Overrider: "plaintext", Path: "/spec/replicas", Before: "3", After: "5"},
		{Policy: p, Overrider: "plaintext", Path: "/spec/replicas", Before: "5", After: "6"},
		{Policy: p, Overrider: "plaintext", Path: "/spec/template/spec/containers/0/args/0", After: `"--first"`},
		{Policy: p, Overrider: "plaintext", Path: "/metadata/labels/app", Before: `"web"`},
		{Policy: p, Overrider: "plaintext", Path: "/spec/template/spec/containers/0/args/-", After: `"--last"`},
	}
	if diff := cmp.Diff(want, res.Changes); diff != "" {
		t.Errorf("changes mismatch (-want +got):\n%s", diff)
	}
}
