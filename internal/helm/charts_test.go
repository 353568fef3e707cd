package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"helm.sh/helm/v4/pkg/chart/common"
)

// chartFiles reads the chart folder testdata/charts/<name> as FromFiles
// takes it: slash paths relative to the folder.
func chartFiles(t testing.TB, name string) map[string][]byte {
	t.Helper()
	root := filepath.Join("testdata", "charts", name)
	files := map[string][]byte{}
	err := fs.WalkDir(os.DirFS(root), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(os.DirFS(root), p)
		files[p] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// testChart is FromFiles of a test chart under DefaultLimits.
func testChart(t testing.TB, name string) *Chart {
	t.Helper()
	c, err := FromFiles(chartFiles(t, name), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// yamlValues reads values as `helm template -f` reads a values file.
func yamlValues(t testing.TB, text string) map[string]any {
	t.Helper()
	v, err := common.ReadValues([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// kinds lists the "Kind/name" of objects, in order.
func kinds(objs []Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		meta, _ := o.Object["metadata"].(map[string]any)
		out[i] = o.Object["kind"].(string) + "/" + meta["name"].(string)
	}
	return out
}

// TestHelmWebChart renders the web chart (the one examples and e2e use)
// in a worker: a Deployment, a Service and a ConfigMap, with its values.
func TestHelmWebChart(t *testing.T) {
	c := testChart(t, "web")
	if c.Name != "web" || c.Version != "1.0.0" {
		t.Fatalf("chart %s %s", c.Name, c.Version)
	}
	rel := Release{Name: "hello", Namespace: "demo", Values: yamlValues(t, "replicaCount: 3\nimage:\n  tag: \"1.27.3\"\n")}
	out, err := NewRenderer(DefaultLimits()).Render(c, rel)
	if err != nil {
		t.Fatal(err)
	}
	got := kinds(out.Objects)
	want := []string{"ConfigMap/hello", "Service/hello", "Deployment/hello"}
	if len(got) != len(want) || len(out.CRDs) != 0 || len(out.Hooks) != 0 {
		t.Fatalf("rendered %v, crds %v, hooks %v; want %v", got, out.CRDs, out.Hooks, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("rendered %v, want %v", got, want)
		}
	}
	dep := out.Objects[2].Object
	spec := dep["spec"].(map[string]any)
	image := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]
	if spec["replicas"] != float64(3) || image != "docker.io/library/nginx:1.27.3" {
		t.Fatalf("replicas %v, image %v", spec["replicas"], image)
	}
}

// packChart makes a .tgz of a chart's files as `helm package` lays it
// out: everything under a folder named for the chart, folders included.
func packChart(t testing.TB, name string, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := slices.Sorted(maps.Keys(files))
	dirs := map[string]bool{}
	for _, n := range names {
		var parents []string
		for d := path.Dir(n); d != "."; d = path.Dir(d) {
			parents = append(parents, d)
		}
		slices.Reverse(parents)
		for _, d := range append([]string{""}, parents...) {
			if !dirs[d] {
				dirs[d] = true
				if err := tw.WriteHeader(&tar.Header{Name: path.Join(name, d) + "/", Mode: 0o755, Typeflag: tar.TypeDir}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: path.Join(name, n), Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(files[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHelmChartArchive: the shop chart packed as a registry serves it
// (subcharts, folders and all) is the same chart as its folder: same
// name, version, digest and render.
func TestHelmChartArchive(t *testing.T) {
	files := chartFiles(t, "shop")
	delete(files, ".helmignore") // what it lists is not in the folder anyway
	dir, err := FromFiles(files, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	arch, err := FromArchive(packChart(t, "shop", files), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if arch.Name != "shop" || arch.Version != "0.3.0" || arch.Digest != dir.Digest {
		t.Fatalf("archive: %s %s %s; folder: %s", arch.Name, arch.Version, arch.Digest, dir.Digest)
	}
	rel := Release{Name: "shop", Namespace: "shop", Values: yamlValues(t, "image:\n  tag: \"2.1.0\"\n")}
	a, err := Render(context.Background(), arch, rel, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Render(context.Background(), dir, rel, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(b, a); d != "" {
		t.Fatalf("renders differ (-folder +archive):\n%s", d)
	}
}
