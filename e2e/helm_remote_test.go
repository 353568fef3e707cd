package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/charts"
	"github.com/propagit/propagit/internal/helm/fetch"
)

// chartArchive packs helmChartFiles as chart name at version: the .tgz
// `helm package` makes (one top folder named after the chart).
func chartArchive(t *testing.T, name, version, defaultReplicas string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	files := helmChartFiles(version, defaultReplicas)
	files["charts/web/Chart.yaml"] = "apiVersion: v2\nname: " + name + "\nversion: " + version + "\n"
	for _, p := range slices.Sorted(mapsKeys(files)) {
		body := files[p]
		if err := tw.WriteHeader(&tar.Header{Name: name + "/" + strings.TrimPrefix(p, "charts/web/"), Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// chartRepo is a Helm chart repository over HTTP with basic auth: an
// index.yaml and the archives it lists, changed by the test.
type chartRepo struct {
	*httptest.Server
	mu      sync.Mutex
	entries []string          // index entries
	files   map[string][]byte // served archives
}

const chartRepoUser, chartRepoPass = "fleet-robot", "chart-Pa55"

func newChartRepo(t *testing.T) *chartRepo {
	r := &chartRepo{files: map[string][]byte{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != chartRepoUser || p != chartRepoPass {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if req.URL.Path == "/index.yaml" {
			fmt.Fprintf(w, "apiVersion: v1\nentries:\n  web:\n%s", strings.Join(r.entries, ""))
			return
		}
		data, ok := r.files[strings.TrimPrefix(req.URL.Path, "/")]
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Write(data)
	}))
	t.Cleanup(r.Close)
	return r
}

// publish lists web at version with the digest of archive, and serves
// served (archive itself, or tampered bytes).
func (r *chartRepo) publish(version string, archive, served []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	file := "web-" + version + ".tgz"
	r.entries = append(r.entries, fmt.Sprintf("  - {name: web, version: %s, apiVersion: v2, digest: %s, urls: [%s]}\n", version, sha256Hex(archive), file))
	r.files[file] = served
}

// pushOCIChart uploads a chart to a registry with the registry API.
func pushOCIChart(t *testing.T, base, repo, tag string, tgz []byte) {
	t.Helper()
	put := func(method, path, ctype string, body []byte) {
		req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
	}
	config := []byte(`{"name":"api","version":"` + tag + `","apiVersion":"v2"}`)
	for _, b := range [][]byte{config, tgz} {
		put(http.MethodPost, "/v2/"+repo+"/blobs/uploads/?digest=sha256:"+sha256Hex(b), "application/octet-stream", b)
	}
	desc := func(mt string, b []byte) map[string]any {
		return map[string]any{"mediaType": mt, "digest": "sha256:" + sha256Hex(b), "size": len(b)}
	}
	m, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": desc("application/vnd.cncf.helm.config.v1+json", config),
		"layers": []any{desc("application/vnd.cncf.helm.chart.content.v1.tar+gzip", tgz)}})
	put(http.MethodPut, "/v2/"+repo+"/manifests/"+tag, "application/vnd.oci.image.manifest.v1+json", m)
}

// TestHelmRemoteChartsOnMembers: one chart from an HTTP chart repository
// (basic auth, credentials from outside Git) and one from an OCI
// registry, both pinned by version, are pulled by the controller and
// applied to three real members, the third with its own values. A
// version bump rolls out; a tampered archive (bytes that do not match the
// index's digest) and a version the registry does not have keep what
// runs, and the status says why.
func TestHelmRemoteChartsOnMembers(t *testing.T) {
	t.Parallel()
	members := sharedMembers(t, 3)
	m1, m2, m3 := members[0], members[1], members[2]
	ns := randomNamespace("helm-remote")

	repo := newChartRepo(t)
	v1 := chartArchive(t, "web", "1.0.0", "1")
	repo.publish("1.0.0", v1, v1)
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	pushOCIChart(t, reg.URL, "charts/api", "1.0.0", chartArchive(t, "api", "1.0.0", "1"))
	regHost := strings.TrimPrefix(reg.URL, "http://")

	remote := e2etest.HTTPRemote(t)
	reader := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	for _, m := range members {
		co.Write(fleetDir+"/clusters/"+m.Name+".yaml", clusterYAML(m.Name))
	}
	co.Write(fleetDir+"/ns.yaml", e2etest.NamespaceYAML(ns))
	release := func(webVersion, apiVersion string) string {
		return fmt.Sprintf(`apiVersion: propagit.io/v1alpha1
kind: HelmChart
metadata: {name: web, namespace: %[1]s}
spec: {repoURL: %[2]s, chart: web, version: %[3]s}
---
apiVersion: propagit.io/v1alpha1
kind: HelmChart
metadata: {name: api, namespace: %[1]s}
spec: {repoURL: "oci://%[4]s/charts", chart: api, version: %[5]s}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: charts, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: propagit.io/v1alpha1, kind: HelmChart}]
  placement: {clusterAffinity: {clusterNames: [%[6]s, %[7]s, %[8]s]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: big, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: propagit.io/v1alpha1, kind: HelmChart}]
  overrideRules:
  - targetCluster: {clusterNames: [%[8]s]}
    overriders:
      plaintext: [{path: /spec/values, operator: add, value: {replicaCount: 3}}]
`, ns, repo.URL, webVersion, regHost, apiVersion, m1.Name, m2.Name, m3.Name)
	}
	co.Write(fleetDir+"/apps/charts.yaml", release("1.0.0", "1.0.0"))
	rev1 := co.CommitPush("web 1.0.0 and api 1.0.0")

	opts := controllerOptions()
	cache := t.TempDir()
	opts.ChartRemote = charts.FetchWith(&fetch.Fetcher{CacheDir: cache, PlainHTTP: true,
		Credentials: fetch.Credentials{strings.TrimPrefix(repo.URL, "http://"): {Username: chartRepoUser, Password: chartRepoPass}}})
	ctrl := startControllerOpts(t, newSetup(t, remote, members...), opts)
	eventually(t, converge, both(
		func() (bool, string) { return replicasIs(m1, ns, "web", 1) },
		func() (bool, string) { return replicasIs(m2, ns, "web", 1) },
		func() (bool, string) { return replicasIs(m3, ns, "web", 3) },
		func() (bool, string) { return replicasIs(m1, ns, "api", 1) },
		func() (bool, string) { return replicasIs(m3, ns, "api", 3) },
	))
	reader.waitApplied(rev1, m1.Name, m2.Name, m3.Name)

	// A version bump: web 1.1.0 defaults to 2 replicas.
	v11 := chartArchive(t, "web", "1.1.0", "2")
	repo.publish("1.1.0", v11, v11)
	co.Write(fleetDir+"/apps/charts.yaml", release("1.1.0", "1.0.0"))
	rev2 := co.CommitPush("web 1.1.0")
	eventually(t, converge, both(
		func() (bool, string) { return replicasIs(m1, ns, "web", 2) },
		func() (bool, string) { return replicasIs(m2, ns, "web", 2) },
		func() (bool, string) { return replicasIs(m3, ns, "web", 3) },
		configMapDataIs(m1, ns, "web-config", "chart", "1.1.0"),
	))
	reader.waitApplied(rev2, m1.Name, m2.Name, m3.Name)

	// A pull-request job reads the controller's cache offline: render
	// gives the third member web 1.1.0 with its 3 replicas; without the
	// cache it says the chart is not available offline, and fails.
	fleet := filepath.Join(co.Dir, fleetDir)
	run := runCLI(t, converge, "render", fleet, "-o", "yaml", "--cluster", m3.Name, "--chart-cache", cache)
	if run.code != 0 || !strings.Contains(run.stdout, "chart: 1.1.0") || !strings.Contains(run.stdout, "replicas: 3") {
		t.Errorf("offline render from the controller's chart cache: %s", run)
	}
	// The pull request's diff of the version bump, offline from the
	// cache: web's Deployment goes from 1 to 2 replicas on the first
	// member, the third keeps its own 3.
	run = runCLI(t, converge, "diff", fleet, "--base", rev1, "--head", rev2, "--chart-cache", cache, "--cluster", m1.Name+","+m3.Name)
	if run.code != 0 || !strings.Contains(run.stdout, "-  replicas: 1") || !strings.Contains(run.stdout, "+  replicas: 2") || !strings.Contains(run.stdout, "1.1.0") {
		t.Errorf("diff of the chart version bump: %s", run)
	}
	run = runCLI(t, converge, "render", fleet, "-o", "yaml", "--cluster", m3.Name)
	if run.code == 0 || !strings.Contains(run.stderr, "is not available offline: give --chart-cache DIR") {
		t.Errorf("offline render without a chart cache: %s", run)
	}

	// web 1.2.0's archive is not what the index's digest says; api 9.9.9
	// is not in the registry. Both keep what runs, and say why.
	v12 := chartArchive(t, "web", "1.2.0", "4")
	repo.publish("1.2.0", v12, chartArchive(t, "web", "1.2.0", "5"))
	co.Write(fleetDir+"/apps/charts.yaml", release("1.2.0", "9.9.9"))
	rev3 := co.CommitPush("web 1.2.0 (tampered), api 9.9.9 (missing)")
	ctrl.waitRevision(rev3)
	eventually(t, converge, func() (bool, string) {
		var digest, missing bool
		errs := reader.report(t).RenderErrors
		for _, e := range errs {
			digest = digest || (strings.Contains(e.Error, "HelmChart") && strings.Contains(e.Error, "/web") && strings.Contains(e.Error, "digest"))
			missing = missing || (strings.Contains(e.Error, "/api") && strings.Contains(e.Error, "not found"))
		}
		return digest && missing, fmt.Sprintf("status lacks the digest mismatch of web or the missing api: %+v", errs)
	})
	ctrl.waitPasses(2)
	for _, c := range []func() (bool, string){
		func() (bool, string) { return replicasIs(m1, ns, "web", 2) },
		func() (bool, string) { return replicasIs(m3, ns, "web", 3) },
		func() (bool, string) { return replicasIs(m1, ns, "api", 1) },
		configMapDataIs(m1, ns, "web-config", "chart", "1.1.0"),
	} {
		if ok, why := c(); !ok {
			t.Errorf("a chart that failed to fetch changed what runs: %s", why)
		}
	}
	ctrl.stop()
}
