package cli

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newcomerFleet lints clean with --strict: each row of
// TestLintNewcomerMistakes changes one file of it.
var newcomerFleet = map[string]string{
	"clusters.yaml": `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: member1}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: member2}
`,
	"ns.yaml": `apiVersion: v1
kind: Namespace
metadata: {name: demo}
`,
	"app.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  namespace: demo
  labels:
    app: nginx
spec:
  replicas: 2
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers: [{name: nginx, image: nginx:1.27}]
`,
	"policy.yaml": newcomerPolicy("placement", "nginx", "member2"),
}

// newcomerPolicy is the fleet's PropagationPolicy with its placement
// field, selector name and second cluster as given.
func newcomerPolicy(placement, name, cluster string) string {
	return `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx, namespace: demo}
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: ` + name + `
  ` + placement + `:
    clusterAffinity:
      clusterNames: [member1, ` + cluster + `]
`
}

// TestLintNewcomerMistakes re-runs the eight mistakes of issue #28's
// newcomer: each is reported at the file and line that hold it, in words
// that say what to do, and lint exits non-zero. Mistakes that make the
// fleet unloadable exit 2 with the load error on stderr; the others exit 1
// with a finding on stdout.
func TestLintNewcomerMistakes(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // "" deletes the file
		args  []string
		code  int
		want  string // a line of stdout (exit 1) or stderr (exit 2)
	}{
		{
			name:  "typo in a policy field",
			files: map[string]string{"policy.yaml": newcomerPolicy("placment", "nginx", "member2")},
			code:  2,
			want:  `policy.yaml:9: spec.placment: unknown field (did you mean "placement"?)`,
		},
		{
			name:  "selector matching nothing",
			files: map[string]string{"policy.yaml": newcomerPolicy("placement", "ngnix", "member2")},
			code:  1,
			want:  `policy.yaml:8: warning: PropagationPolicy.policy.karmada.io/demo/nginx selects no template: resourceSelectors[0] (apps/v1 Deployment ngnix): no Deployment is named ngnix; did you mean nginx?`,
		},
		{
			name:  "misspelled cluster",
			files: map[string]string{"policy.yaml": newcomerPolicy("placement", "nginx", "membr2")},
			code:  1,
			want:  `policy.yaml:11: warning: PropagationPolicy.policy.karmada.io/demo/nginx: placement.clusterAffinity.clusterNames names cluster "membr2", which no Cluster declares; did you mean "member2"?`,
		},
		{
			name: "missing override path",
			files: map[string]string{"override.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: replicas, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  overrideRules:
  - targetCluster: {clusterNames: [member1]}
    overriders:
      plaintext:
      - path: /spec/replica
        operator: replace
        value: 3
`},
			code: 1,
			want: `override.yaml:11: error: OverridePolicy.policy.karmada.io/demo/replicas: overrideRules[0].overriders.plaintext[0].path /spec/replica: Deployment.apps/demo/nginx has no field spec.replica; did you mean spec.replicas? (the override fails on cluster member1, which keeps its current objects)`,
		},
		{
			name: "invalid YAML",
			files: map[string]string{"app.yaml": strings.Replace(newcomerFleet["app.yaml"],
				"    app: nginx\n", "    app: nginx\n  - tier: web\n", 1)},
			code: 2,
			want: `app.yaml:8: invalid YAML: did not find expected key: check this line's indentation against the lines above it`,
		},
		{
			name:  "duplicate object",
			files: map[string]string{"copy.yaml": newcomerFleet["app.yaml"]},
			code:  2,
			want:  `copy.yaml:1: Deployment.apps/demo/nginx is defined twice: first at app.yaml:1`,
		},
		{
			// The policy selects the Deployment, so it selects something;
			// its second selector is a typo all the same.
			name: "one selector of two matching nothing",
			files: map[string]string{"policy.yaml": strings.Replace(newcomerPolicy("placement", "nginx", "member2"),
				"  placement:", "  - apiVersion: v1\n    kind: Service\n    name: ngnix\n  placement:", 1)},
			code: 1,
			want: `policy.yaml:10: warning: PropagationPolicy.policy.karmada.io/demo/nginx: resourceSelectors[1] (v1 Service ngnix) selects no template: no template is of kind Service`,
		},
		{
			// A namespace no Namespace declares is info, not a warning:
			// apply creates it on each member, so the fleet works, and
			// fleets whose namespaces are made by another tool are common.
			// Failing every such pull request would teach --fail-on none;
			// a team that wants it fails on it with --strict.
			name:  "missing Namespace",
			files: map[string]string{"ns.yaml": ""},
			args:  []string{"--strict"},
			code:  1,
			want:  `app.yaml:5: info: namespace demo is declared by no Namespace in the fleet: apply creates it on each member unmanaged (never updated or pruned); add a Namespace to manage it`,
		},
		{
			name: "kustomization with a missing file",
			files: map[string]string{
				"extra/kustomization.yaml": "namespace: demo\nresources:\n- config.yaml\n- service.yaml\n",
				"extra/config.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n",
			},
			code: 2,
			want: `extra/kustomization.yaml:4: resources[1]: "service.yaml" does not exist: add it or remove the entry`,
		},
	}
	base := t.TempDir()
	writeFleet(t, base, newcomerFleet)
	stdout, _ := runCLI(t, 0, "lint", "--source", base, "--strict")
	if stdout != "no findings\n" {
		t.Fatalf("the base fleet has findings:\n%s", stdout)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := maps.Clone(newcomerFleet)
			for name, content := range tt.files {
				if content == "" {
					delete(files, name)
				} else {
					files[name] = content
				}
			}
			dir := t.TempDir()
			writeFleet(t, dir, files)
			stdout, stderr := runCLI(t, tt.code, append([]string{"lint", "--source", dir}, tt.args...)...)
			got := "\n" + stdout
			if tt.code == 2 {
				got = strings.ReplaceAll("\n"+stderr, "\nerror: ", "\n") // runCLI's prefix
			}
			if !strings.Contains(got, "\n"+tt.want+"\n") {
				t.Errorf("want the line\n  %s\nin:\n%s", tt.want, got)
			}
		})
	}
}

// writeFleet writes path → content under dir, making folders.
func writeFleet(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, content)
	}
}
