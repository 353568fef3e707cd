package e2etest

import "testing"

// TestConfigMapYAMLKeepsTheBytesOfTheBuildersItReplaced: the end-to-end
// packages each wrote these ConfigMaps by hand before; the manifests (and
// so what the scenarios commit) are the same bytes.
func TestConfigMapYAMLKeepsTheBytesOfTheBuildersItReplaced(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{ConfigMapYAML("ns", "app", "v1"), `apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  namespace: ns
data:
  value: "v1"
`},
		{ConfigMapYAML("ns", "app", "v1", "app", "app"), `apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  namespace: ns
  labels:
    app: app
data:
  value: "v1"
`},
		{ConfigMapYAML("soak-a", "tmpl-00", `say "hi"`, "soak.propagit.io/template", `"true"`), `apiVersion: v1
kind: ConfigMap
metadata:
  name: tmpl-00
  namespace: soak-a
  labels:
    soak.propagit.io/template: "true"
data:
  value: "say \"hi\""
`},
	} {
		if tc.got != tc.want {
			t.Errorf("got\n%s\nwant\n%s", tc.got, tc.want)
		}
	}
}
