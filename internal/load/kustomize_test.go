package load

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKustomizeBaseAndOverlay(t *testing.T) {
	set := mustLoad(t, map[string]string{
		"base/kustomization.yaml":     "resources:\n- deployment.yaml\n",
		"base/deployment.yaml":        deployment,
		"overlay/kustomization.yaml":  "namePrefix: prod-\nnamespace: shop\nresources:\n- ../base\n",
		"plain/configmap.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n",
		"overlay/not-a-manifest.yaml": "this file is not read: the folder is built by kustomize\n",
	})
	if diff := cmp.Diff([]string{"shop/prod-web", "default/settings"}, templateNames(set)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	if got := set.Templates[0].Source; got != (Source{Path: "overlay/kustomization.yaml"}) {
		t.Errorf("source of a built object: got %+v", got)
	}
}

func TestKustomizeBaseIsBuiltWhenNothingUsesIt(t *testing.T) {
	set := mustLoad(t, map[string]string{
		"app/kustomization.yml": "namePrefix: a-\nresources:\n- deployment.yaml\n",
		"app/deployment.yaml":   deployment,
	})
	if diff := cmp.Diff([]string{"default/a-web"}, templateNames(set)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
}

func TestKustomizeRootFolder(t *testing.T) {
	set := mustLoad(t, map[string]string{
		"Kustomization":   "resources:\n- deployment.yaml\n",
		"deployment.yaml": deployment,
	})
	if diff := cmp.Diff([]string{"default/web"}, templateNames(set)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
}

func TestKustomizeRefusals(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name: "resource outside the source folder",
			files: map[string]string{
				"app/kustomization.yaml": "resources:\n- ../../outside\n",
			},
			want: []string{`app/kustomization.yaml:2: resources[0]: "../../outside" is outside the source folder`},
		},
		{
			name: "remote git base",
			files: map[string]string{
				"app/kustomization.yaml": "resources:\n- deployment.yaml\n- github.com/org/repo//deploy?ref=v1\n",
				"app/deployment.yaml":    deployment,
			},
			want: []string{`app/kustomization.yaml:3: resources[1]: "github.com/org/repo//deploy?ref=v1" is a remote reference: propagit builds kustomizations from the source folder only`},
		},
		{
			name: "remote patch over https in a base",
			files: map[string]string{
				"base/kustomization.yaml":    "resources:\n- deployment.yaml\npatches:\n- path: https://example.com/patch.yaml\n",
				"base/deployment.yaml":       deployment,
				"overlay/kustomization.yaml": "resources:\n- ../base\n",
			},
			want: []string{`base/kustomization.yaml:4: patches[0].path: "https://example.com/patch.yaml" is a remote reference: propagit builds kustomizations from the source folder only`},
		},
		{
			name: "scp-style git base",
			files: map[string]string{
				"app/kustomization.yaml": "components:\n- git@gitlab.example.com:org/repo.git\n",
			},
			want: []string{`app/kustomization.yaml:2: components[0]: "git@gitlab.example.com:org/repo.git" is a remote reference: propagit builds kustomizations from the source folder only`},
		},
		{
			name: "bases that use each other",
			files: map[string]string{
				"a/kustomization.yaml": "resources:\n- ../b\n",
				"b/kustomization.yaml": "resources:\n- ../a\n",
			},
			want: []string{`b/kustomization.yaml:2: resources[0]: "../a" refers back to a kustomization that uses this one: cycle`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, problemsOf(t, tt.files)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKustomizeBuildErrorsAreProblems(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{
			name: "exec plugin",
			files: map[string]string{
				"app/kustomization.yaml": "generators:\n- gen.yaml\n",
				"app/gen.yaml": "apiVersion: example.com/v1\nkind: Gen\nmetadata:\n  name: g\n" +
					"  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: /bin/sh\n",
			},
			want: "external plugins disabled",
		},
		{
			name: "helm chart",
			files: map[string]string{
				"app/kustomization.yaml": "helmCharts:\n- name: nginx\n  repo: https://charts.example.com\n",
			},
			want: "must specify --enable-helm",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemsOf(t, tt.files)
			const prefix = "app/kustomization.yaml: kustomize build failed: "
			if len(got) != 1 || !strings.HasPrefix(got[0], prefix) || !strings.Contains(got[0], tt.want) {
				t.Errorf("got %q, want one problem starting with %q and naming %q", got, prefix, tt.want)
			}
		})
	}
}

// TestKustomizeMissingFileAtItsLine: a kustomization naming a file or
// folder that does not exist is a problem at the entry's line (kustomize's
// own error names no line), and the kustomization is not built.
func TestKustomizeMissingFileAtItsLine(t *testing.T) {
	got := problemsOf(t, map[string]string{
		"app/kustomization.yaml": "resources:\n- deploy.yaml\n- missing.yaml\nconfigMapGenerator:\n- name: c\n  files: [conf=gone.conf]\n",
		"app/deploy.yaml":        deployment,
	})
	want := []string{
		`app/kustomization.yaml:3: resources[1]: "missing.yaml" does not exist: add it or remove the entry`,
		`app/kustomization.yaml:6: configMapGenerator[0].files[0]: "gone.conf" does not exist: add it or remove the entry`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestKustomizeOutputIsValidatedStrictly(t *testing.T) {
	got := problemsOf(t, map[string]string{
		"app/kustomization.yaml": "resources:\n- policy.yaml\n",
		"app/policy.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: web
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
  placement:
    clusterAfinity: {}
`,
	})
	want := []string{`app/kustomization.yaml: spec.placement.clusterAfinity: unknown field (did you mean "clusterAffinity"?) (in PropagationPolicy.policy.karmada.io/web built by kustomize)`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// kustomize repeats a malformed secretGenerator literal in its error; the
// error reaches logs, status and pull-request comments, so the value must
// not.
func TestKustomizeErrorsDoNotRepeatSecretLiterals(t *testing.T) {
	for _, lit := range []string{"hunter22value", "=hunter22value", "pass word hunter22value"} {
		got := problemsOf(t, map[string]string{
			"k/kustomization.yaml": "secretGenerator:\n- name: s\n  literals:\n  - " + lit + "\n",
		})
		if len(got) != 1 || !strings.Contains(got[0], "kustomize build failed") {
			t.Fatalf("problems = %q, want the build failure", got)
		}
		if strings.Contains(got[0], "hunter22") {
			t.Errorf("the literal leaks: %s", got[0])
		}
	}
}
