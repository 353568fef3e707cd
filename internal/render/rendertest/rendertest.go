// Package rendertest holds the fixtures the tests of render and of
// render/incremental share: small fleets written as YAML, loaded from an
// in-memory filesystem, and summaries of a Result to compare.
package rendertest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
)

// T0 is the time the failover fixtures start at.
var T0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// Clusters declares Ready clusters with the given names and labels "name".
func Clusters(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, `---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: %s
  labels: {name: %s}
spec:
  syncMode: Push
`, n, n)
	}
	return b.String()
}

// Nginx is a Deployment of 4 replicas in namespace demo that reads the
// ConfigMap nginx-env, with the fields a live object carries.
const Nginx = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  namespace: demo
  uid: 0b9f
  resourceVersion: "12"
spec:
  replicas: 4
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        envFrom:
        - configMapRef: {name: nginx-env}
status:
  readyReplicas: 4
`

// LoadFiles loads files, through cache when it is not nil.
func LoadFiles(t *testing.T, files map[string]string, cache *load.Cache) *load.Set {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	for name, content := range files {
		if err := fs.WriteFile("/repo/"+name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	loadFS := load.Load
	if cache != nil {
		loadFS = cache.Load
	}
	set, err := loadFS(fs, "/repo")
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return set
}

// WorksJSON is the Works of res as JSON: two renders agree when it does.
func WorksJSON(t *testing.T, res *render.Result) string {
	t.Helper()
	data, err := json.Marshal(res.Works)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Placement returns cluster → object keys (with replicas for Deployments).
func Placement(res *render.Result) map[string][]string {
	out := map[string][]string{}
	for _, w := range res.Works {
		for _, o := range w.Objects {
			s := workv1alpha1.KeyOf(o).String()
			if r, ok, _ := unstructured.NestedInt64(o.Object, "spec", "replicas"); ok {
				s += fmt.Sprintf(" replicas=%d", r)
			}
			out[w.Cluster] = append(out[w.Cluster], s)
		}
	}
	return out
}

// Object returns the object of key rendered for cluster, failing t when
// there is none.
func Object(t *testing.T, res *render.Result, cluster, key string) *unstructured.Unstructured {
	t.Helper()
	for _, w := range res.Works {
		if w.Cluster != cluster {
			continue
		}
		for _, o := range w.Objects {
			if workv1alpha1.KeyOf(o).String() == key {
				return o
			}
		}
	}
	t.Fatalf("%s not rendered for %s; placement: %v", key, cluster, Placement(res))
	return nil
}

// Binding returns the binding of the template of key, failing t when there
// is none.
func Binding(t *testing.T, res *render.Result, key string) *render.Binding {
	t.Helper()
	for _, b := range res.Bindings {
		if b.Key.String() == key {
			return b
		}
	}
	t.Fatalf("no binding %s", key)
	return nil
}

// ErrorSummary renders each render error as "template cluster policy
// overrider path kept".
func ErrorSummary(res *render.Result) []string {
	var out []string
	for _, e := range res.Errors {
		kept := "absent"
		if e.Kept {
			kept = "kept"
		}
		out = append(out, strings.Join([]string{e.Template.String(), e.Cluster, e.Policy, e.Overrider, e.Path, kept}, " "))
	}
	return out
}

// Render renders in through memo, afresh (render.Render) when memo is nil.
func Render(memo *incremental.Memo, in render.Input) *render.Result {
	if memo == nil {
		return render.Render(in)
	}
	return memo.Render(in)
}
