package override

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

func TestWrites(t *testing.T) {
	src := func(name string) load.Source { return load.Source{Path: "policies/" + name + ".yaml", Line: 1} }
	tests := []struct {
		name     string
		file     string
		policies []load.Override
		want     []Write
		wantErr  error
	}{
		{
			name: "two rules writing one path both appear, in order",
			file: "deployment.yaml",
			policies: []load.Override{
				op("web", withRule(clusters("member1"), replicas("5"))),
				cop("base", withRule(nil, replicas("1"))),
			},
			want: []Write{
				{Policy: "ClusterOverridePolicy.policy.karmada.io/base", Overrider: "plaintext", Path: "/spec/replicas", Source: src("base")},
				{Policy: "OverridePolicy.policy.karmada.io/default/web", Overrider: "plaintext", Path: "/spec/replicas", Source: src("web")},
			},
		},
		{
			name: "rules for other clusters write nothing",
			file: "deployment.yaml",
			policies: []load.Override{
				op("web", withRule(clusters("member2"), replicas("5"))),
			},
		},
		{
			name: "a fieldOverrider writes each sub path",
			file: "configmap.yaml",
			policies: []load.Override{op("cfg", withRule(nil, policyv1alpha1.Overriders{
				FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/data/config.json", JSON: []policyv1alpha1.JSONPatchOp{
					{Operator: "replace", SubPath: "/key/key1", Value: raw(`"x"`)},
					{Operator: "remove", SubPath: "/z"},
				}}},
			}))},
			want: []Write{
				{Policy: "OverridePolicy.policy.karmada.io/default/cfg", Overrider: "fieldOverrider", Path: "/data/config.json", SubPath: "/key/key1", Source: src("cfg")},
				{Policy: "OverridePolicy.policy.karmada.io/default/cfg", Overrider: "fieldOverrider", Path: "/data/config.json", SubPath: "/z", Source: src("cfg")},
			},
		},
		{
			name: "a missing plaintext path is Apply's error, after the writes before it",
			file: "configmap.yaml",
			policies: []load.Override{
				op("bad", withRule(nil, plain(set("replace", "/data/replicas", `"4"`))), withRule(nil, plain(set("replace", "/spec/replicas", "4")))),
			},
			want: []Write{
				{Policy: "OverridePolicy.policy.karmada.io/default/bad", Overrider: "plaintext", Path: "/data/replicas", Source: src("bad")},
			},
			wantErr: ErrMissingPath,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := readObject(t, tt.file)
			before := obj.DeepCopy()
			got, err := Writes(obj, member("member1", nil), tt.policies)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Writes error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("writes mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object, obj.Object); diff != "" {
				t.Errorf("Writes modified the object (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWritesRuleIndex(t *testing.T) {
	got, err := Writes(readObject(t, "deployment.yaml"), member("member1", nil), []load.Override{
		op("web", withRule(clusters("member2"), replicas("5")), withRule(nil, replicas("6"))),
	})
	if err != nil {
		t.Fatalf("Writes: %v", err)
	}
	if len(got) != 1 || got[0].Rule != 1 {
		t.Errorf("Writes = %+v, want one write from rule 1", got)
	}
}
