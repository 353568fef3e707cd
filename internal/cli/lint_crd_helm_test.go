package cli

import (
	"maps"
	"strings"
	"testing"
)

// TestLintHelmChart: a chart folder is one error that says "Helm chart",
// at its Chart.yaml, instead of an invalid-YAML problem per template; a
// fleet that is only a chart gets that one finding, not also "renders no
// object".
func TestLintHelmChart(t *testing.T) {
	chart := map[string]string{
		"chart/Chart.yaml":  "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"chart/values.yaml": "replicas: 2\n",
		"chart/templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}-web\n" +
			"spec:\n  replicas: {{ .Values.replicas }}\n",
		"chart/templates/service.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ include \"web.fullname\" . }}\n",
	}
	const want = "chart/Chart.yaml:1: error: this folder is a Helm chart that no HelmChart names, so nothing of it is deployed; " +
		"declare a HelmChart (apiVersion propagit.io/v1alpha1) to have it rendered (spec.chart: the folder, relative to the HelmChart's file)\n"
	for name, files := range map[string]map[string]string{"beside a fleet": maps.Clone(newcomerFleet), "alone": {}} {
		t.Run(name, func(t *testing.T) {
			maps.Copy(files, chart)
			dir := t.TempDir()
			writeFleet(t, dir, files)
			stdout, _ := runCLI(t, 1, "lint", "--source", dir)
			if stdout != want+"1 finding (1 error, 0 warnings, 0 info)\n" {
				t.Errorf("got:\n%s\nwant one finding:\n%s", stdout, want)
			}
		})
	}
	// A loose template with Helm placeholders: one finding at the first.
	files := maps.Clone(newcomerFleet)
	files["svc.yaml"] = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: demo\n  labels:\n    {{- include \"web.labels\" . | nindent 4 }}\n"
	dir := t.TempDir()
	writeFleet(t, dir, files)
	stdout, _ := runCLI(t, 1, "lint", "--source", dir)
	const loose = `svc.yaml:7: error: this file holds Helm template placeholders ({{- include "web.labels" . | nindent 4 }}) outside a chart folder (one with Chart.yaml), so it is not read`
	if !strings.HasPrefix(stdout, loose) || strings.Count(stdout, "\n") != 2 {
		t.Errorf("got:\n%s\nwant one finding starting with:\n%s", stdout, loose)
	}
}

// widgetCRD is a CustomResourceDefinition with a structural schema.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              parts:
                type: array
                items:
                  type: object
                  properties:
                    name: {type: string}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
`

// TestLintCustomResourceFields: a custom resource whose CRD is in the
// fleet is checked against the CRD's schema; each field the schema lacks
// (and the API server would prune) is a warning at its line, with the
// closest property; fields under x-kubernetes-preserve-unknown-fields are
// kept.
func TestLintCustomResourceFields(t *testing.T) {
	files := maps.Clone(newcomerFleet)
	files["crd.yaml"] = widgetCRD
	files["widget.yaml"] = `apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: demo}
spec:
  sise: 3
  parts:
  - name: a
    nmae: b
  extra: {anything: goes}
`
	files["widget-policy.yaml"] = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: widgets, namespace: demo}
spec:
  resourceSelectors: [{apiVersion: example.com/v1, kind: Widget}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`
	dir := t.TempDir()
	writeFleet(t, dir, files)
	stdout, _ := runCLI(t, 1, "lint", "--source", dir)
	for _, want := range []string{
		`widget.yaml:5: warning: Widget.example.com/demo/w: spec.sise: unknown field (did you mean "size"?); its CustomResourceDefinition's schema does not have it, so the API server drops it`,
		`widget.yaml:8: warning: Widget.example.com/demo/w: spec.parts[0].nmae: unknown field (did you mean "name"?); its CustomResourceDefinition's schema does not have it, so the API server drops it`,
	} {
		if !strings.Contains(stdout, want+"\n") {
			t.Errorf("want\n  %s\nin:\n%s", want, stdout)
		}
	}
	if n := strings.Count(stdout, "unknown field"); n != 2 {
		t.Errorf("%d unknown fields, want 2:\n%s", n, stdout)
	}
}
