package join

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestRender(t *testing.T) {
	res := &Result{APIEndpoint: "https://10.0.0.1:6443", CABundle: []byte("CA"), Token: "tok"}
	tests := []struct {
		name  string
		opts  Options
		want  []string
		check func(Manifests) bool
	}{
		{
			name: "push has secretRef and a Secret",
			opts: Options{Name: "edge", Mode: ModePush, Region: "eu", Zones: []string{"a", "b"}, Labels: map[string]string{"env": "prod"}},
			want: []string{"syncMode: Push", "apiEndpoint: https://10.0.0.1:6443", "name: edge-credentials",
				"namespace: karmada-cluster", "region: eu", "- a", "env: prod", "kind: Cluster"},
			check: func(m Manifests) bool {
				return strings.Contains(string(m.Secret), "token: dG9r") && strings.Contains(string(m.Secret), "caBundle: Q0E=") &&
					strings.Contains(string(m.Secret), "namespace: karmada-cluster") && m.Agent == nil
			},
		},
		{
			name: "pull has no secretRef and an agent",
			opts: Options{Name: "shop", Mode: ModePull},
			want: []string{"syncMode: Pull"},
			check: func(m Manifests) bool {
				return m.Secret == nil && strings.Contains(string(m.Agent), "--cluster=shop") &&
					strings.Contains(string(m.Agent), "serviceAccountName: propagit") && !strings.Contains(string(m.Cluster), "secretRef")
			},
		},
		{
			name: "pull from a hub mounts the hub kubeconfig and reads Work CRs",
			opts: Options{Name: "edge-7", Mode: ModePull, Hub: true},
			want: []string{"syncMode: Pull"},
			check: func(m Manifests) bool {
				a := string(m.Agent)
				return strings.Contains(a, "--works-store=cr") && strings.Contains(a, "--hub-kubeconfig=/etc/propagit/hub/kubeconfig") &&
					strings.Contains(a, "secretName: propagit-hub") && strings.Contains(a, "propagit-member-edge-7") &&
					!strings.Contains(a, "--repo=") && !strings.Contains(a, "PROPAGIT_GIT_TOKEN")
			},
		},
		{
			name: "pull from its own works repository",
			opts: Options{Name: "edge-8", Mode: ModePull, WorksRepo: "https://git.example.com/fleet-works-{cluster}.git"},
			want: []string{"syncMode: Pull"},
			check: func(m Manifests) bool {
				a := string(m.Agent)
				return strings.Contains(a, "--works-repo=https://git.example.com/fleet-works-{cluster}.git") && !strings.Contains(a, "--repo=") &&
					strings.Contains(a, "PROPAGIT_GIT_TOKEN")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Render(tt.opts, res)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(m.Cluster), w) {
					t.Errorf("Cluster lacks %q:\n%s", w, m.Cluster)
				}
			}
			var agent map[string]any
			if err := yaml.Unmarshal(m.Agent, &agent); err != nil {
				t.Errorf("the agent manifest does not parse: %v\n%s", err, m.Agent)
			}
			if !tt.check(m) {
				t.Errorf("unexpected manifests:\n%s\n---\n%s\n---\n%s", m.Cluster, m.Secret, m.Agent)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, o := range []Options{{Name: "", Mode: ModePush}, {Name: "Bad_Name", Mode: ModePush}, {Name: "ok", Mode: "sideways"}} {
		if o.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", o)
		}
	}
}
