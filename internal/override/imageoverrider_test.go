package override

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

func TestImageOverrider(t *testing.T) {
	const (
		web     = "/spec/template/spec/containers/0/image"
		sidecar = "/spec/template/spec/containers/1/image"
		init    = "/spec/template/spec/initContainers/0/image"
	)
	registry := func(operator, value string) policyv1alpha1.ImageOverrider {
		return policyv1alpha1.ImageOverrider{Component: "Registry", Operator: operator, Value: value}
	}
	tests := []struct {
		name    string
		file    string
		items   []policyv1alpha1.ImageOverrider
		want    map[string]any
		wantErr string
	}{
		{
			name:  "no predicate edits every container but not initContainers",
			file:  "deployment.yaml",
			items: []policyv1alpha1.ImageOverrider{registry("replace", "mirror.example")},
			want: map[string]any{
				web:     "mirror.example/imagename:v1.0.0",
				sidecar: "mirror.example/tools/proxy@" + testDigest,
				init:    "busybox:1.36",
			},
		},
		{
			name:  "each item is a separate patch that sees the previous one",
			file:  "deployment.yaml",
			items: []policyv1alpha1.ImageOverrider{registry("remove", ""), registry("add", "r.example")},
			want: map[string]any{
				web:     "r.example/imagename:v1.0.0",
				sidecar: "r.example/tools/proxy@" + testDigest,
				init:    "busybox:1.36",
			},
		},
		{
			name: "predicate path reaches an init container",
			file: "deployment.yaml",
			items: []policyv1alpha1.ImageOverrider{{
				Predicate: &policyv1alpha1.ImagePredicate{Path: init},
				Component: "Tag", Operator: "replace", Value: "1.37",
			}},
			want: map[string]any{web: "fictional.registry.example/imagename:v1.0.0", init: "busybox:1.37"},
		},
		{
			name:  "pod containers live under spec",
			file:  "pod.yaml",
			items: []policyv1alpha1.ImageOverrider{registry("add", "registry.k8s.io")},
			want:  map[string]any{"/spec/containers/0/image": "registry.k8s.io/perl:5.34.0"},
		},
		{
			name:  "other kinds are untouched without a predicate",
			file:  "cronjob.yaml",
			items: []policyv1alpha1.ImageOverrider{registry("add", "registry.k8s.io")},
			want:  map[string]any{"/spec/jobTemplate/spec/template/spec/containers/0/image": "nginx"},
		},
		{
			name: "predicate path works on any kind",
			file: "cronjob.yaml",
			items: []policyv1alpha1.ImageOverrider{{
				Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/jobTemplate/spec/template/spec/containers/0/image"},
				Component: "Registry", Operator: "add", Value: "registry.k8s.io",
			}},
			want: map[string]any{"/spec/jobTemplate/spec/template/spec/containers/0/image": "registry.k8s.io/nginx"},
		},
		{
			name: "predicate path on a non-string value fails",
			file: "deployment.yaml",
			items: []policyv1alpha1.ImageOverrider{{
				Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/replicas"},
				Component: "Tag", Operator: "replace", Value: "x",
			}},
			wantErr: `OverridePolicy.policy.karmada.io/default/p: overrideRules[0].overriders.imageOverrider[0]: failed to read "/spec/replicas": value is a number, not a string`,
		},
		{
			name: "predicate path that does not exist fails",
			file: "deployment.yaml",
			items: []policyv1alpha1.ImageOverrider{{
				Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/5/image"},
				Component: "Tag", Operator: "replace", Value: "x",
			}},
			wantErr: `OverridePolicy.policy.karmada.io/default/p: overrideRules[0].overriders.imageOverrider[0]: failed to read "/spec/template/spec/containers/5/image": path does not exist`,
		},
		{
			name: "a failing second item names its index",
			file: "deployment.yaml",
			items: []policyv1alpha1.ImageOverrider{
				registry("add", ".test"),
				{Component: "Layer", Operator: "add", Value: "x"},
			},
			wantErr: `OverridePolicy.policy.karmada.io/default/p: overrideRules[0].overriders.imageOverrider[1]: unsupported image component "Layer"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, _, err := applyRule(t, tt.file, policyv1alpha1.Overriders{ImageOverrider: tt.items})
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Fatalf("error mismatch (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			paths := make([]string, 0, len(tt.want))
			for p := range tt.want {
				paths = append(paths, p)
			}
			if diff := cmp.Diff(tt.want, valuesAt(t, obj, paths)); diff != "" {
				t.Errorf("images mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Karmada converts the whole workload to its typed form before editing
// images and fails on a mistyped field anywhere; propagit reads the
// containers in place (a deliberate deviation, for render speed), so only a
// malformed containers list fails.
func TestImageOverriderReadsContainersInPlace(t *testing.T) {
	items := []policyv1alpha1.ImageOverrider{{Component: "Tag", Operator: "replace", Value: "x"}}
	policies := []load.Override{op("p", withRule(nil, policyv1alpha1.Overriders{ImageOverrider: items}))}

	obj := readObject(t, "deployment.yaml")
	obj.Object["spec"].(map[string]any)["replicas"] = "three"
	if _, err := Apply(obj, member("member1", nil), policies); err != nil {
		t.Fatalf("a mistyped field outside the containers must not stop the image overrider: %v", err)
	}

	bad := readObject(t, "deployment.yaml")
	bad.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"] = []any{"not-an-object"}
	if _, err := Apply(bad, member("member1", nil), policies); err == nil {
		t.Fatal("a container that is not an object must fail")
	}
}

func TestWorkloadKinds(t *testing.T) {
	tests := []struct {
		kind string
		want any
	}{
		{kind: "Deployment", want: "r.example/imagename:v1.0.0"},
		{kind: "ReplicaSet", want: "r.example/imagename:v1.0.0"},
		{kind: "DaemonSet", want: "r.example/imagename:v1.0.0"},
		{kind: "StatefulSet", want: "r.example/imagename:v1.0.0"},
		{kind: "Job", want: "r.example/imagename:v1.0.0"},
		{kind: "ReplicationController", want: "fictional.registry.example/imagename:v1.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			obj := readObject(t, "deployment.yaml")
			obj.SetKind(tt.kind)
			ov := policyv1alpha1.Overriders{
				ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: "Registry", Operator: "replace", Value: "r.example"}},
				ArgsOverrider:  []policyv1alpha1.CommandArgsOverrider{{ContainerName: "web", Operator: "remove", Value: []string{"--verbose"}}},
			}
			if _, err := Apply(obj, member("member1", nil), []load.Override{op("p", withRule(nil, ov))}); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			wantArgs := []any{"--port=80"}
			if tt.kind == "ReplicationController" {
				wantArgs = []any{"--port=80", "--verbose"}
			}
			want := []any{tt.want, wantArgs}
			got := []any{
				valueAt(t, obj, "/spec/template/spec/containers/0/image"),
				valueAt(t, obj, "/spec/template/spec/containers/0/args"),
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("image and args mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
