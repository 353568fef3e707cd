package helm

import (
	"testing"
)

func webChart() map[string][]byte {
	return map[string][]byte{
		"Chart.yaml":  []byte("apiVersion: v2\nname: web\nversion: 1.0.0\n"),
		"values.yaml": []byte("replicaCount: 1\nimage:\n  repository: nginx\n  tag: \"\"\n"),
		"templates/deployment.yaml": []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicaCount }}
  template:
    spec:
      containers:
      - name: web
        image: "{{ .Values.image.repository }}:{{ required "image.tag is required" .Values.image.tag }}"
{{- if .Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget" }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ .Release.Name }}
{{- end }}
`),
	}
}

func TestRenderSmoke(t *testing.T) {
	c, err := FromFiles(webChart(), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	rel := Release{Name: "web", Namespace: "demo", Values: map[string]any{"image": map[string]any{"tag": "1.27"}, "replicaCount": int64(3)}, Capabilities: Capabilities{KubeVersion: "v1.31.0", APIVersions: []string{"v1", "apps/v1", "apps/v1/Deployment", "policy/v1", "policy/v1/PodDisruptionBudget"}}}
	r := NewRenderer(DefaultLimits())
	out, err := r.Render(c, rel)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Objects) != 2 {
		t.Fatalf("objects: %+v", out.Objects)
	}
	rel.Values = nil
	_, err = r.Render(c, rel)
	e, ok := err.(*Error)
	if !ok || e.Template != "web/templates/deployment.yaml" || e.Line != 11 {
		t.Fatalf("err = %#v", err)
	}
	t.Log(err)
}
