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
		"chart/Chart.yaml:1: this folder is a Helm chart that no HelmChart names, so nothing of it is deployed; " + HelmFindingMark + " (spec.chart: the folder, relative to the HelmChart's file)",
		"loose/svc.yaml:6: this file holds Helm template placeholders ({{- include \"web.labels\" . | nindent 4 }}) outside a chart folder (one with Chart.yaml), so it is not read; move it into a chart's templates/ and " + HelmFindingMark,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if names := templateNames(set); !cmp.Equal(names, []string{"default/alerts"}) {
		t.Errorf("templates %v, want only the alerts ConfigMap", names)
	}
	for _, f := range set.Findings {
		if !IsHelmFinding(f) || !strings.Contains(f.Message, "Helm") {
			t.Errorf("%s: not recognised as a Helm finding", f)
		}
	}
}

// TestHelmChartReadsItsChart: a HelmChart naming a chart folder (relative
// to its own file) has the folder's files, and its values files, read;
// the chart no longer counts as unused. A HelmChart naming a folder
// outside the repository, a folder without Chart.yaml, or a values file
// outside the repository is a problem at the HelmChart, and nothing is
// read from there.
func TestHelmChartReadsItsChart(t *testing.T) {
	chart := map[string]string{
		"charts/web/Chart.yaml":                 "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"charts/web/templates/cm.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
		"charts/web/charts/db/Chart.yaml":       "apiVersion: v2\nname: db\nversion: 0.1.0\n",
		"charts/web/charts/db/templates/x.yaml": "{{ .Values.x }}\n",
		"apps/web/values-prod.yaml":             "replicaCount: 3\n",
	}
	files := map[string]string{"apps/web/release.yaml": "apiVersion: propagit.io/v1alpha1\nkind: HelmChart\nmetadata: {name: web, namespace: demo}\n" +
		"spec:\n  chart: ../../charts/web\n  valuesFiles: [values-prod.yaml]\n  values: {image: {tag: '1.0'}}\n"}
	for k, v := range chart {
		files[k] = v
	}
	set := mustLoad(t, files)
	if len(set.Findings) != 0 {
		t.Errorf("findings: %v", set.Findings)
	}
	got := set.Charts["charts/web"]
	if len(got) != 4 || string(got["charts/db/templates/x.yaml"]) != "{{ .Values.x }}\n" {
		t.Errorf("chart files: %v", got)
	}
	if string(set.ValuesFiles["apps/web/values-prod.yaml"]) != "replicaCount: 3\n" {
		t.Errorf("values files: %v", set.ValuesFiles)
	}
	for name, spec := range map[string]string{
		"outside":   "spec: {chart: ../../../etc}\n",
		"notchart":  "spec: {chart: ../../apps}\n",
		"values":    "spec: {chart: ../../charts/web, valuesFiles: [../../../../etc/passwd]}\n",
		"typo":      "spec: {chart: ../../charts/web, valuesFile: [x.yaml]}\n",
		"remotebad": "spec: {chart: web, repoURL: https://charts.example.com, version: '^1.0'}\n",
	} {
		bad := map[string]string{"apps/web/release.yaml": "apiVersion: propagit.io/v1alpha1\nkind: HelmChart\nmetadata: {name: web, namespace: demo}\n" + spec}
		for k, v := range chart {
			bad[k] = v
		}
		_, err := loadFiles(t, bad)
		if err == nil || !strings.Contains(err.Error(), "apps/web/release.yaml:1") || !strings.Contains(err.Error(), "HelmChart \"web\"") {
			t.Errorf("%s: err = %v, want a problem at the HelmChart", name, err)
		}
	}
}
