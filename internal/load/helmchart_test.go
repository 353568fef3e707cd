package load

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHelmChartIsOneFinding: a folder holding Chart.yaml is one finding at
// its Chart.yaml that says "Helm chart", not a problem per template; a
// loose file with Helm placeholders is one finding at the first one. Go
// templates of other tools ({{ $labels.x }}, {{ range .Alerts }}) load.
func TestHelmChartIsOneFinding(t *testing.T) {
	set := mustLoad(t, map[string]string{
		"chart/Chart.yaml":  "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"chart/values.yaml": "replicas: 2\n",
		"chart/templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}-web\n" +
			"spec:\n  replicas: {{ .Values.replicas }}\n",
		"chart/templates/_helpers.tpl": "{{- define \"web.name\" -}}web{{- end }}\n",
		"loose/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  labels:\n" +
			"    {{- include \"web.labels\" . | nindent 4 }}\n",
		"alerts.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: alerts}\ndata:\n" +
			"  t: '{{ range .Alerts }}{{ $labels.instance }} {{ .Annotations.summary }}{{ end }}'\n",
	})
	var got []string
	for _, f := range set.Findings {
		got = append(got, f.String())
	}
	want := []string{
		"chart/Chart.yaml:1: this folder is a Helm chart; " + HelmNotRendered + ": commit the output of `helm template` instead; nothing in this folder is read",
		"loose/svc.yaml:6: this file holds Helm template placeholders ({{- include \"web.labels\" . | nindent 4 }}); " + HelmNotRendered + ": commit the output of `helm template` instead; the file is not read",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if names := templateNames(set); !cmp.Equal(names, []string{"default/alerts"}) {
		t.Errorf("templates %v, want only the alerts ConfigMap", names)
	}
	for _, f := range set.Findings {
		if !IsHelmFinding(f) || !strings.Contains(f.Message, "Helm chart") {
			t.Errorf("%s: not recognised as a Helm finding", f)
		}
	}
}
