package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/testenv"
)

// helmChartFiles is a chart in the fleet repo: a Deployment whose
// replicas and image tag come from values (the tag required), which
// records the Kubernetes version the chart saw, and a ConfigMap.
func helmChartFiles(version, defaultReplicas string) map[string]string {
	return map[string]string{
		"charts/web/Chart.yaml":  "apiVersion: v2\nname: web\nversion: " + version + "\n",
		"charts/web/values.yaml": "replicaCount: " + defaultReplicas + "\nimage: {repository: docker.io/library/nginx, tag: '1.27'}\n",
		"charts/web/templates/_helpers.tpl": `{{- define "web.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
`,
		"charts/web/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {{- include "web.labels" . | nindent 4 }}
  annotations:
    kube-version: "{{ .Capabilities.KubeVersion.Version }}"
spec:
  replicas: {{ .Values.replicaCount }}
  selector:
    matchLabels: {{- include "web.labels" . | nindent 6 }}
  template:
    metadata:
      labels: {{- include "web.labels" . | nindent 8 }}
    spec:
      containers:
      - name: web
        image: "{{ .Values.image.repository }}:{{ required "image.tag is required" .Values.image.tag }}"
`,
		"charts/web/templates/migrate.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
  annotations:
    helm.sh/hook: post-install
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: busybox}]
`,
		"charts/web/templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  chart: "{{ .Chart.Version }}"
`,
	}
}

// TestHelmChartOnMembers releases a chart from the fleet repo (real Git
// over smart HTTP) to three real members: the third gets its replicas
// from an OverridePolicy on the HelmChart's values, the second a mirror
// registry from an imageOverrider on the Deployment the chart renders,
// and each Deployment records the Kubernetes version its member reported
// (capabilities from the live probe). A chart version bump rolls out; a
// commit that makes the chart fail for the third member keeps what it
// runs there, names chart file, line and cluster in the status, and the
// other members move on.
func TestHelmChartOnMembers(t *testing.T) {
	t.Parallel()
	members := sharedMembers(t, 3)
	m1, m2, m3 := members[0], members[1], members[2]
	ns := randomNamespace("helm")
	remote := e2etest.HTTPRemote(t)
	reader := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	for _, m := range members {
		co.Write(fleetDir+"/clusters/"+m.Name+".yaml", clusterYAML(m.Name))
	}
	co.Write(fleetDir+"/ns.yaml", e2etest.NamespaceYAML(ns))
	for name, data := range helmChartFiles("1.0.0", "1") {
		co.Write(fleetDir+"/"+name, data)
	}
	release := fmt.Sprintf(`apiVersion: propagit.io/v1alpha1
kind: HelmChart
metadata: {name: web, namespace: %[1]s}
spec:
  chart: ../charts/web
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: propagit.io/v1alpha1, kind: HelmChart, name: web}]
  placement: {clusterAffinity: {clusterNames: [%[2]s, %[3]s, %[4]s]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: web-values, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: propagit.io/v1alpha1, kind: HelmChart, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [%[4]s]}
    overriders:
      plaintext: [{path: /spec/values, operator: add, value: {replicaCount: 3}}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: web-mirror, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [%[3]s]}
    overriders:
      imageOverrider: [{component: Registry, operator: replace, value: mirror.example.com}]
`, ns, m1.Name, m2.Name, m3.Name)
	co.Write(fleetDir+"/apps/release.yaml", release)
	rev1 := co.CommitPush("web chart 1.0.0")
	ctrl := startController(t, newSetup(t, remote, members...))
	eventually(t, converge, both(
		func() (bool, string) { return replicasIs(m1, ns, "web", 1) },
		func() (bool, string) { return replicasIs(m2, ns, "web", 1) },
		func() (bool, string) { return replicasIs(m3, ns, "web", 3) },
		func() (bool, string) { return imageIs(m1, ns, "web", "docker.io/library/nginx:1.27") },
		func() (bool, string) { return imageIs(m2, ns, "web", "mirror.example.com/library/nginx:1.27") },
		func() (bool, string) { return imageIs(m3, ns, "web", "docker.io/library/nginx:1.27") },
	))
	reader.waitApplied(rev1, m1.Name, m2.Name, m3.Name)
	// The post-install hook is not applied, and the status says so for
	// each member.
	hooked := map[string]bool{}
	for _, h := range reader.report(t).HelmHooks {
		if strings.Contains(h.Error, "Job web-migrate (post-install) from charts/web/templates/migrate.yaml") {
			hooked[h.Cluster] = true
		}
	}
	if len(hooked) != 3 {
		t.Errorf("status reports the unapplied hook on %v, want all three members: %+v", hooked, reader.report(t).HelmHooks)
	}
	for _, m := range members {
		if job, err := getOrNil(m.Client().BatchV1().Jobs(ns).Get, "web-migrate"); err != nil || job != nil {
			t.Errorf("%s: the hook Job was applied (%v)", m.Name, err)
		}
		d, err := getDeployment(m, ns, "web")
		if err != nil || d == nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if got := d.Annotations["kube-version"]; !strings.HasPrefix(got, "v1.") || got == "v1.20.0" {
			t.Errorf("%s: the chart saw Kubernetes %q, not the member's reported version", m.Name, got)
		}
		if d.Annotations["propagit.io/helm-chart"] != ns+"/web" {
			t.Errorf("%s: annotations %v", m.Name, d.Annotations)
		}
	}

	// A chart version bump (default replicas 1 -> 2) rolls out; the third
	// member keeps its own 3.
	for name, data := range helmChartFiles("1.1.0", "2") {
		co.Write(fleetDir+"/"+name, data)
	}
	rev2 := co.CommitPush("web chart 1.1.0")
	eventually(t, converge, both(
		func() (bool, string) { return replicasIs(m1, ns, "web", 2) },
		func() (bool, string) { return replicasIs(m2, ns, "web", 2) },
		func() (bool, string) { return replicasIs(m3, ns, "web", 3) },
		configMapDataIs(m1, ns, "web-config", "chart", "1.1.0"),
	))
	reader.waitApplied(rev2, m1.Name, m2.Name, m3.Name)

	// The third member's values now lack the required tag, in a commit
	// that also moves everyone to nginx 1.28: the third keeps 1.27.
	co.Write(fleetDir+"/apps/release.yaml", strings.Replace(release, "value: {replicaCount: 3}", "value: {replicaCount: 3, image: {tag: ''}}", 1))
	co.Edit(fleetDir+"/charts/web/values.yaml", "tag: '1.27'", "tag: '1.28'")
	rev3 := co.CommitPush("nginx 1.28; the third member's tag emptied")
	ctrl.waitRevision(rev3)
	eventually(t, converge, both(
		func() (bool, string) { return imageIs(m1, ns, "web", "docker.io/library/nginx:1.28") },
		func() (bool, string) { return imageIs(m2, ns, "web", "mirror.example.com/library/nginx:1.28") },
	))
	eventually(t, converge, func() (bool, string) {
		for _, e := range reader.report(t).RenderErrors {
			if e.Cluster == m3.Name && strings.Contains(e.Error, "charts/web/templates/deployment.yaml:18") && strings.Contains(e.Error, "image.tag is required") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no chart error for %s in status: %+v", m3.Name, reader.report(t).RenderErrors)
	})
	ctrl.waitPasses(2)
	if ok, why := imageIs(m3, ns, "web", "docker.io/library/nginx:1.27"); !ok {
		t.Errorf("the member the chart failed for lost what it ran: %s", why)
	}
	if ok, why := replicasIs(m3, ns, "web", 3); !ok {
		t.Error(why)
	}
	ctrl.stop()
}

// configMapDataIs reports whether the ConfigMap's data[key] is want.
func configMapDataIs(m *testenv.Member, ns, name, key, want string) func() (bool, string) {
	return func() (bool, string) {
		cm, err := getConfigMap(m, ns, name)
		switch {
		case err != nil:
			return false, fmt.Sprintf("%s: %v", m.Name, err)
		case cm == nil:
			return false, fmt.Sprintf("%s: ConfigMap %s/%s not found", m.Name, ns, name)
		case cm.Data[key] != want:
			return false, fmt.Sprintf("%s: ConfigMap %s/%s data[%s] = %q, want %q", m.Name, ns, name, key, cm.Data[key], want)
		}
		return true, ""
	}
}
