package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// Sizes of BenchmarkHelmRenderVsHelmTemplate's fleet.
const (
	helmBenchClusters   = 100
	helmBenchApps       = 10 // a Deployment, a Service and a ConfigMap each: 30 objects
	helmBenchOverridden = 10 // clusters with values of their own
	helmBenchKube       = "v1.37.2"
)

// BenchmarkHelmRenderVsHelmTemplate measures, side by side in one run, two
// ways of getting every cluster's manifests of one Helm chart (30 objects:
// 10 Deployments, 10 Services and 10 ConfigMaps from one values list) on
// 100 clusters, 10 of which have values of their own:
//   - propagit: `propagit render --source repo -o yaml` of a fleet with
//     one HelmChart, one PropagationPolicy and 10 OverridePolicies on the
//     HelmChart's values, its stream written to a file as helm's is, end
//     to end in process (load, chart renders in worker processes,
//     placement, encode, write). Each op starts with an empty chart
//     renderer, as a new `propagit render` process does. `render --out
//     DIR` (a file per object: 3,100 files) is timed too and reported,
//     not gated: its cost is the filesystem's;
//   - helm: the `helm template` CLI (built from the Helm module propagit
//     links) once per cluster with `-f` the shared values file and `-f`
//     that cluster's values file, its output written to a file, one
//     cluster after the other as a CI script runs them.
//
// It reports each side's wall and CPU seconds per op and x-helm/propagit,
// the ratio of the wall times, and fails when that ratio is under 20. The
// two outputs must agree on the replicas of a Deployment on an overridden
// cluster and on a plain one.
//
//	go test ./internal/cli/ -run '^$' -bench HelmRenderVsHelmTemplate -benchtime 1x -timeout 30m
func BenchmarkHelmRenderVsHelmTemplate(b *testing.B) {
	dir := b.TempDir()
	helmBin := buildHelm(b, dir)
	repo := filepath.Join(dir, "repo")
	clusters := writeHelmBenchFleet(b, repo)

	propagitOut, helmOut := filepath.Join(dir, "rendered"), filepath.Join(dir, "helm")
	var propagitWall, helmWall, folderWall time.Duration
	var propagitCPU, helmCPU time.Duration
	for b.Loop() {
		// propagit render --out, with a cold chart cache as a new process has.
		processCharts.Clear()
		start, cpu := time.Now(), cpuUsed()
		var stdout, stderr bytes.Buffer
		stream, err := os.Create(filepath.Join(dir, "propagit.yaml"))
		if err != nil {
			b.Fatal(err)
		}
		cmd := NewRootCommand(stream, &stderr)
		cmd.SetArgs([]string{"render", "--source", repo, "-o", "yaml"})
		err = cmd.Execute()
		if cerr := stream.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatalf("propagit render -o yaml: %v\n%s", err, stderr.String())
		}
		propagitWall += time.Since(start)
		propagitCPU += cpuUsed() - cpu

		// The same render into a folder, a file per object.
		processCharts.Clear()
		start = time.Now()
		cmd = NewRootCommand(&stdout, &stderr)
		cmd.SetArgs([]string{"render", "--source", repo, "--out", propagitOut})
		if err := cmd.Execute(); err != nil {
			b.Fatalf("propagit render --out: %v\n%s", err, stderr.String())
		}
		folderWall += time.Since(start)

		// helm template, once per cluster.
		start, cpu = time.Now(), cpuUsed()
		if err := os.MkdirAll(helmOut, 0o755); err != nil {
			b.Fatal(err)
		}
		for _, c := range clusters {
			out, err := os.Create(filepath.Join(helmOut, c+".yaml"))
			if err != nil {
				b.Fatal(err)
			}
			var errOut bytes.Buffer
			h := exec.Command(helmBin, "template", "web", filepath.Join(repo, "charts", "bench"),
				"--namespace", "demo", "--kube-version", helmBenchKube,
				"-f", filepath.Join(repo, "apps", "bench", "common.yaml"),
				"-f", filepath.Join(dir, "values", c+".yaml"))
			h.Stdout, h.Stderr = out, &errOut
			// helm reads no config of the user running the benchmark.
			h.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(dir, "helm-home"), "HELM_CACHE_HOME="+filepath.Join(dir, "helm-home"), "HELM_DATA_HOME="+filepath.Join(dir, "helm-home"))
			err = h.Run()
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				b.Fatalf("helm template for %s: %v\n%s", c, err, errOut.String())
			}
		}
		helmWall += time.Since(start)
		helmCPU += cpuUsed() - cpu
	}

	// The two agree on a Deployment's replicas where a cluster's values
	// differ and where they do not (and the two clusters do differ).
	deploy := "web-" + helmBenchAppName(0)
	overridden, plain := clusters[0], clusters[helmBenchOverridden]
	var got [2]int64
	for i, c := range []string{overridden, plain} {
		p := propagitReplicas(b, filepath.Join(propagitOut, c, "demo", "deployment.apps_"+deploy+".yaml"))
		h := helmReplicas(b, filepath.Join(helmOut, c+".yaml"), deploy)
		if p != h {
			b.Errorf("cluster %s: propagit renders Deployment demo/%s with %d replicas, helm template with %d", c, deploy, p, h)
		}
		got[i] = p
	}
	if got[0] == got[1] {
		b.Errorf("clusters %s and %s both got %d replicas: the OverridePolicy on the HelmChart's values did not reach %s", overridden, plain, got[0], overridden)
	}
	if n := countFiles(b, filepath.Join(propagitOut, plain, "demo")); n != 3*helmBenchApps {
		b.Errorf("propagit wrote %d objects in demo for %s, want %d", n, plain, 3*helmBenchApps)
	}

	n := float64(b.N)
	pw, hw := propagitWall.Seconds()/n, helmWall.Seconds()/n
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(pw, "propagit-wall-s/op")
	b.ReportMetric(hw, "helm-wall-s/op")
	b.ReportMetric(propagitCPU.Seconds()/n, "propagit-cpu-s/op")
	b.ReportMetric(helmCPU.Seconds()/n, "helm-cpu-s/op")
	b.ReportMetric(hw/pw, "x-helm/propagit")
	b.ReportMetric(folderWall.Seconds()/n, "propagit-out-dir-wall-s/op")
	b.Logf("per op, %d clusters x %d objects: propagit render -o yaml %.2fs wall %.2fs CPU; helm template x%d %.2fs wall %.2fs CPU: %.1fx faster; propagit render --out DIR (%d files) %.2fs wall",
		helmBenchClusters, 3*helmBenchApps, pw, propagitCPU.Seconds()/n, len(clusters), hw, helmCPU.Seconds()/n, hw/pw, helmBenchClusters*(3*helmBenchApps+1), folderWall.Seconds()/n)
	if hw/pw < 20 {
		b.Errorf("propagit render -o yaml is %.1fx faster than helm template per cluster; want at least 20x", hw/pw)
	}
}

// buildHelm builds the helm CLI of the Helm module propagit links into
// dir, or skips the benchmark. `go build` inside this module needs go.sum
// entries for the CLI's own requirements, which propagit does not have;
// `go install …@version` then builds it with the Helm module's go.sum
// (through the module proxy the first time).
func buildHelm(b *testing.B, dir string) string {
	b.Helper()
	bin := filepath.Join(dir, "bin", "helm")
	build := exec.Command("go", "build", "-o", bin, "helm.sh/helm/v4/cmd/helm")
	out, err := build.CombinedOutput()
	if err == nil {
		return bin
	}
	// The version propagit's go.mod requires (this package's folder is
	// in the module).
	v, verr := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "helm.sh/helm/v4").Output()
	version := strings.TrimSpace(string(v))
	if verr != nil || version == "" {
		skipHelmBench(b, fmt.Sprintf("cannot build the helm CLI (go build helm.sh/helm/v4/cmd/helm: %v: %s), nor find which Helm version propagit requires (go list -m helm.sh/helm/v4: %v)", err, lastLine(out), verr))
	}
	install := exec.Command("go", "install", "helm.sh/helm/v4/cmd/helm@"+version)
	install.Dir = dir // outside propagit's module
	install.Env = append(os.Environ(), "GOBIN="+filepath.Dir(bin), "GOFLAGS=")
	out2, err2 := install.CombinedOutput()
	if err2 != nil {
		skipHelmBench(b, fmt.Sprintf("cannot build the helm CLI: go build helm.sh/helm/v4/cmd/helm: %v: %s; go install helm.sh/helm/v4/cmd/helm@%s: %v: %s",
			err, lastLine(out), version, err2, lastLine(out2)))
	}
	return bin
}

// skipHelmBench skips the benchmark saying why on stderr too: go test
// -bench without -v does not print a skipped benchmark's message.
func skipHelmBench(b *testing.B, why string) {
	b.Helper()
	fmt.Fprintln(os.Stderr, "BenchmarkHelmRenderVsHelmTemplate skipped:", why)
	b.Skip(why)
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

func helmBenchAppName(i int) string { return fmt.Sprintf("app-%02d", i) }

// writeHelmBenchFleet writes the fleet under repo, and beside it
// (dir/values/<cluster>.yaml) each cluster's values for helm template.
// It returns the clusters' names, the overridden ones first.
func writeHelmBenchFleet(b *testing.B, repo string) []string {
	b.Helper()
	files := map[string]string{}
	var apps strings.Builder
	for i := range helmBenchApps {
		fmt.Fprintf(&apps, "- name: %s\n  port: %d\n", helmBenchAppName(i), 8080+i)
	}
	files["charts/bench/Chart.yaml"] = "apiVersion: v2\nname: bench\nversion: 1.0.0\nappVersion: \"1.27\"\n"
	files["charts/bench/values.yaml"] = "replicaCount: 1\ntier: standard\nimage:\n  repository: docker.io/library/nginx\n  tag: \"1.26\"\napps:\n" + apps.String()
	files["charts/bench/templates/_helpers.tpl"] = `{{- define "bench.labels" -}}
app.kubernetes.io/name: {{ .app.name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
helm.sh/chart: {{ .root.Chart.Name }}-{{ .root.Chart.Version }}
{{- end }}
`
	files["charts/bench/templates/deployments.yaml"] = `{{- range .Values.apps }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $.Release.Name }}-{{ .name }}
  labels:
    {{- include "bench.labels" (dict "app" . "root" $) | nindent 4 }}
spec:
  replicas: {{ $.Values.replicaCount }}
  selector:
    matchLabels:
      app.kubernetes.io/name: {{ .name }}
      app.kubernetes.io/instance: {{ $.Release.Name }}
  template:
    metadata:
      labels:
        {{- include "bench.labels" (dict "app" . "root" $) | nindent 8 }}
    spec:
      containers:
        - name: {{ .name }}
          image: "{{ $.Values.image.repository }}:{{ $.Values.image.tag }}"
          ports:
            - name: http
              containerPort: {{ .port }}
          envFrom:
            - configMapRef:
                name: {{ $.Release.Name }}-{{ .name }}
{{- end }}
`
	files["charts/bench/templates/services.yaml"] = `{{- range .Values.apps }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $.Release.Name }}-{{ .name }}
  labels:
    {{- include "bench.labels" (dict "app" . "root" $) | nindent 4 }}
spec:
  ports:
    - name: http
      port: 80
      targetPort: {{ .port }}
  selector:
    app.kubernetes.io/name: {{ .name }}
    app.kubernetes.io/instance: {{ $.Release.Name }}
{{- end }}
`
	files["charts/bench/templates/configmaps.yaml"] = `{{- range .Values.apps }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $.Release.Name }}-{{ .name }}
  labels:
    {{- include "bench.labels" (dict "app" . "root" $) | nindent 4 }}
data:
  APP: {{ .name | quote }}
  TIER: {{ $.Values.tier | quote }}
  PORT: {{ .port | quote }}
{{- end }}
`
	files["namespaces/demo.yaml"] = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n"
	files["apps/bench/common.yaml"] = "image:\n  tag: \"1.27\"\n"
	files["apps/bench/helmchart.yaml"] = `apiVersion: propagit.io/v1alpha1
kind: HelmChart
metadata:
  name: web
  namespace: demo
spec:
  chart: ../../charts/bench
  valuesFiles:
  - common.yaml
  values:
    replicaCount: 3
`
	files["policies/propagation.yaml"] = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: web
  namespace: demo
spec:
  resourceSelectors:
  - apiVersion: propagit.io/v1alpha1
    kind: HelmChart
    name: web
  placement:
    replicaScheduling:
      replicaSchedulingType: Duplicated
`
	clusters := make([]string, helmBenchClusters)
	for i := range clusters {
		c := fmt.Sprintf("cluster-%03d", i)
		clusters[i] = c
		files["clusters/"+c+".yaml"] = fmt.Sprintf(`apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: %s
spec:
  syncMode: Push
  apiEndpoint: https://%s.clusters.example.internal:6443
status:
  kubernetesVersion: %s
  conditions:
  - type: Ready
    status: "True"
    reason: ClusterReady
    lastTransitionTime: "2026-11-01T08:00:00Z"
  apiEnablements:
  - groupVersion: v1
    resources:
    - {name: configmaps, kind: ConfigMap}
    - {name: namespaces, kind: Namespace}
    - {name: services, kind: Service}
  - groupVersion: apps/v1
    resources:
    - {name: deployments, kind: Deployment}
`, c, c, helmBenchKube)
		// helm template's values for the cluster: spec.values, then the
		// cluster's override.
		values := "replicaCount: 3\n"
		if i < helmBenchOverridden {
			replicas := 4 + i
			files[fmt.Sprintf("policies/values-%s.yaml", c)] = fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata:
  name: web-values-%s
  namespace: demo
spec:
  resourceSelectors:
  - apiVersion: propagit.io/v1alpha1
    kind: HelmChart
    name: web
  overrideRules:
  - targetCluster:
      clusterNames: [%s]
    overriders:
      plaintext:
      - {path: /spec/values/replicaCount, operator: replace, value: %d}
      - {path: /spec/values/tier, operator: add, value: canary}
`, c, c, replicas)
			values = fmt.Sprintf("replicaCount: %d\ntier: canary\n", replicas)
		}
		files["../values/"+c+".yaml"] = values
	}
	for name, text := range files {
		p := filepath.Join(repo, filepath.FromSlash(name))
		writeBenchFile(b, p, []byte(text))
	}
	return clusters
}

// propagitReplicas reads spec.replicas of the object in file.
func propagitReplicas(b *testing.B, file string) int64 {
	b.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	var obj struct {
		Spec struct {
			Replicas *int64 `json:"replicas"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &obj); err != nil {
		b.Fatalf("%s: %v", file, err)
	}
	if obj.Spec.Replicas == nil {
		b.Fatalf("%s: no spec.replicas", file)
	}
	return *obj.Spec.Replicas
}

// helmReplicas reads spec.replicas of Deployment name in helm
// template's output.
func helmReplicas(b *testing.B, file, name string) int64 {
	b.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	for doc := range strings.SplitSeq(string(data), "\n---") {
		doc = strings.TrimPrefix(doc, "---")
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Replicas *int64 `json:"replicas"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			b.Fatalf("%s: %v", file, err)
		}
		if obj.Kind == "Deployment" && obj.Metadata.Name == name && obj.Spec.Replicas != nil {
			return *obj.Spec.Replicas
		}
	}
	b.Fatalf("%s: no Deployment %s with spec.replicas", file, name)
	return 0
}

// countFiles counts the files in dir.
func countFiles(b *testing.B, dir string) int {
	b.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	return len(entries)
}
