package folder

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/render"
)

func configMap(kind, namespace, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("v1")
	obj.SetKind(kind)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return obj
}

// Write is the last line of defence when a hostile name gets past load: it writes through an os.Root, so nothing lands outside --out.
func TestWriteKeepsEveryFileInsideOut(t *testing.T) {
	base := t.TempDir()
	out := filepath.Join(base, "a", "b", "out")
	cases := []struct {
		name    string
		cluster string
		obj     *unstructured.Unstructured
	}{
		{"name climbing out", "member1", configMap("ConfigMap", "default", "../../../../../x")},
		{"namespace climbing out", "member1", configMap("ConfigMap", "../../../../..", "x")},
		{"kind with a slash", "member1", configMap("a/../../../../../../x", "default", "x")},
		{"cluster climbing out", "../../../..", configMap("ConfigMap", "default", "x")},
		{"absolute cluster", filepath.Join(base, "abs"), configMap("ConfigMap", "default", "x")},
	}
	for _, tc := range cases {
		for _, layout := range Layouts {
			t.Run(tc.name+"/"+layout, func(t *testing.T) {
				err := Write(out, []render.Work{{Cluster: tc.cluster, Objects: []*unstructured.Unstructured{tc.obj}}}, layout)
				// The cluster layout writes no object's name in a path.
				if hostile := tc.cluster != "member1" || layout == LayoutObject; hostile && err == nil {
					t.Fatal("Write succeeded")
				}
				var outside []string
				_ = filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						outside = append(outside, p)
					}
					return err
				})
				for _, p := range outside {
					if rel, _ := filepath.Rel(out, p); err != nil || !filepath.IsLocal(rel) {
						t.Errorf("file written: %s (error was %v)", p, err)
					}
				}
				_ = os.RemoveAll(out)
			})
		}
	}
}

func TestWriteRefusesTwoObjectsForOneFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	err := Write(out, []render.Work{{Cluster: "member1", Objects: []*unstructured.Unstructured{
		configMap("ConfigMap", "default", "a"), configMap("configmap", "default", "a"),
	}}}, LayoutObject)
	if err == nil || !strings.Contains(err.Error(), "would both be written to member1/default/configmap.core_a.yaml") {
		t.Fatalf("err = %v, want a collision", err)
	}
	if _, err := os.Lstat(out); !os.IsNotExist(err) {
		t.Errorf("--out was created (%v)", err)
	}
}

func TestWriteRefusesWhatItDidNotWrite(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.yaml")
	if err := os.WriteFile(file, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(dir, "own")
	if err := os.MkdirAll(own, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(own, "keep"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	works := []render.Work{{Cluster: "member1", Objects: []*unstructured.Unstructured{configMap("ConfigMap", "default", "a")}}}
	for _, out := range []string{file, own, link} {
		if err := Write(out, works, LayoutObject); err == nil || !strings.Contains(err.Error(), "refusing to write into") {
			t.Errorf("Write(%s) = %v, want a refusal", out, err)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "mine\n" {
		t.Errorf("the regular file was changed: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(own, "keep")); err != nil {
		t.Errorf("the user's folder was changed: %v", err)
	}

	// An earlier render is replaced, an empty folder filled.
	fresh := filepath.Join(dir, "fresh")
	for range 2 {
		if err := Write(fresh, works, LayoutObject); err != nil {
			t.Fatalf("Write over an earlier render: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(fresh, "member1", "default", "configmap.core_a.yaml")); err != nil {
		t.Error(err)
	}
}

// TestWriteKeepsTheEarlierRenderOnFailure: a render that fails leaves
// the earlier render as it was and nothing beside it.
func TestWriteKeepsTheEarlierRenderOnFailure(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := Write(out, []render.Work{{Cluster: "member1", Objects: []*unstructured.Unstructured{configMap("ConfigMap", "default", "a")}}}, LayoutObject); err != nil {
		t.Fatal(err)
	}
	err := Write(out, []render.Work{{Cluster: "member1", Objects: []*unstructured.Unstructured{
		configMap("ConfigMap", "default", "b"), configMap("configmap", "default", "b"),
	}}}, LayoutObject)
	if err == nil {
		t.Fatal("a render with two objects for one file succeeded")
	}
	got := readTree(t, out)
	if len(got) != 2 || got["member1/default/configmap.core_a.yaml"] == "" || got[Marker] == "" {
		t.Errorf("the earlier render changed: %v", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left beside --out: %v", entries)
	}
}

// readTree maps every file under dir (relative, slash-separated) to its content.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	tree := os.DirFS(dir)
	if err := fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			var b []byte
			b, err = fs.ReadFile(tree, p)
			files[p] = string(b)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return files
}
