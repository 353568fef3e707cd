package override

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

func TestCommandArgsOverrider(t *testing.T) {
	const (
		webArgs        = "/spec/template/spec/containers/0/args"
		webCommand     = "/spec/template/spec/containers/0/command"
		sidecarArgs    = "/spec/template/spec/containers/1/args"
		perlCommand    = "/spec/containers/0/command"
		cronArgs       = "/spec/jobTemplate/spec/template/spec/containers/0/args"
		initContainers = "/spec/template/spec/initContainers/0/args"
	)
	item := func(container, operator string, values ...string) []policyv1alpha1.CommandArgsOverrider {
		return []policyv1alpha1.CommandArgsOverrider{{ContainerName: container, Operator: operator, Value: values}}
	}
	tests := []struct {
		name string
		file string
		ov   policyv1alpha1.Overriders
		want map[string]any
	}{
		{
			name: "args add appends to the named container only",
			file: "deployment.yaml",
			ov:   policyv1alpha1.Overriders{ArgsOverrider: item("web", "add", "--zone=eu")},
			want: map[string]any{
				webArgs:     []any{"--port=80", "--verbose", "--zone=eu"},
				sidecarArgs: "<absent>",
			},
		},
		{
			name: "args remove drops every listed value",
			file: "deployment.yaml",
			ov:   policyv1alpha1.Overriders{ArgsOverrider: item("web", "remove", "--verbose", "--port=80", "--absent")},
			want: map[string]any{webArgs: []any{}},
		},
		{
			name: "command add creates an absent field",
			file: "deployment.yaml",
			ov:   policyv1alpha1.Overriders{CommandOverrider: item("web", "add", "nginx", "-g")},
			want: map[string]any{webCommand: []any{"nginx", "-g"}},
		},
		{
			name: "add with no values creates an empty list",
			file: "deployment.yaml",
			ov:   policyv1alpha1.Overriders{CommandOverrider: item("web", "add")},
			want: map[string]any{webCommand: []any{}},
		},
		{
			name: "remove on an absent field creates an empty list as in Karmada",
			file: "deployment.yaml",
			ov:   policyv1alpha1.Overriders{CommandOverrider: item("sidecar", "remove", "x")},
			want: map[string]any{"/spec/template/spec/containers/1/command": []any{}},
		},
		{
			name: "replace is not an operator and keeps a present list",
			file: "deployment.yaml",
			ov:   policyv1alpha1.Overriders{ArgsOverrider: item("web", "replace", "--other")},
			want: map[string]any{webArgs: []any{"--port=80", "--verbose"}},
		},
		{
			name: "no container with that name is a no-op",
			file: "deployment.yaml",
			ov:   policyv1alpha1.Overriders{ArgsOverrider: item("init", "add", "--x")},
			want: map[string]any{webArgs: []any{"--port=80", "--verbose"}, initContainers: "<absent>"},
		},
		{
			name: "pod command",
			file: "pod.yaml",
			ov:   policyv1alpha1.Overriders{CommandOverrider: item("perl", "remove", "-wle", "print bpi(2000)")},
			want: map[string]any{perlCommand: []any{"perl", "-Mbignum=bpi"}},
		},
		{
			name: "other kinds are untouched",
			file: "cronjob.yaml",
			ov:   policyv1alpha1.Overriders{ArgsOverrider: item("job", "add", "--twice")},
			want: map[string]any{cronArgs: []any{"--once"}},
		},
		{
			name: "command runs before args",
			file: "deployment.yaml",
			ov: policyv1alpha1.Overriders{
				ArgsOverrider:    item("web", "add", "--late"),
				CommandOverrider: item("web", "add", "run"),
			},
			want: map[string]any{webCommand: []any{"run"}, webArgs: []any{"--port=80", "--verbose", "--late"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, _, err := applyRule(t, tt.file, tt.ov)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			paths := make([]string, 0, len(tt.want))
			for p := range tt.want {
				paths = append(paths, p)
			}
			if diff := cmp.Diff(tt.want, valuesAt(t, obj, paths)); diff != "" {
				t.Errorf("values mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommandArgsOverriderRecordsChanges(t *testing.T) {
	_, res, err := applyRule(t, "deployment.yaml", policyv1alpha1.Overriders{
		CommandOverrider: []policyv1alpha1.CommandArgsOverrider{{ContainerName: "web", Operator: "add", Value: []string{"run"}}},
		ArgsOverrider:    []policyv1alpha1.CommandArgsOverrider{{ContainerName: "web", Operator: "remove", Value: []string{"--verbose"}}},
	})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	want := []Change{
		{Policy: "OverridePolicy.policy.karmada.io/default/p", Overrider: "commandOverrider", Path: "/spec/template/spec/containers/0/command", After: `["run"]`},
		{
			Policy: "OverridePolicy.policy.karmada.io/default/p", Overrider: "argsOverrider", Path: "/spec/template/spec/containers/0/args",
			Before: `["--port=80","--verbose"]`, After: `["--port=80"]`,
		},
	}
	if diff := cmp.Diff(want, res.Changes); diff != "" {
		t.Errorf("changes mismatch (-want +got):\n%s", diff)
	}
}
