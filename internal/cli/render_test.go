package cli

import (
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

// writeFolder is the last line of defence when a hostile name gets past
// load: it writes through an os.Root, so nothing lands outside --out.
func TestWriteFolderKeepsEveryFileInsideOut(t *testing.T) {
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
		t.Run(tc.name, func(t *testing.T) {
			err := writeFolder(out, []render.Work{{Cluster: tc.cluster, Objects: []*unstructured.Unstructured{tc.obj}}})
			if err == nil {
				t.Fatal("writeFolder succeeded")
			}
			var outside []string
			_ = filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					outside = append(outside, p)
				}
				return err
			})
			if len(outside) > 0 {
				t.Errorf("files written: %v (error was %v)", outside, err)
			}
		})
	}
}

func TestWriteFolderRefusesTwoObjectsForOneFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	err := writeFolder(out, []render.Work{{Cluster: "member1", Objects: []*unstructured.Unstructured{
		configMap("ConfigMap", "default", "a"), configMap("configmap", "default", "a"),
	}}})
	if err == nil || !strings.Contains(err.Error(), "would both be written to member1/default/configmap.core_a.yaml") {
		t.Fatalf("err = %v, want a collision", err)
	}
	if _, err := os.Lstat(out); !os.IsNotExist(err) {
		t.Errorf("--out was created (%v)", err)
	}
}

func TestWriteFolderRefusesWhatItDidNotWrite(t *testing.T) {
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
		if err := writeFolder(out, works); err == nil || !strings.Contains(err.Error(), "refusing to write into") {
			t.Errorf("writeFolder(%s) = %v, want a refusal", out, err)
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
		if err := writeFolder(fresh, works); err != nil {
			t.Fatalf("writeFolder over an earlier render: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(fresh, "member1", "default", "configmap.core_a.yaml")); err != nil {
		t.Error(err)
	}
}

func TestRenderCommandRefusesHostileNames(t *testing.T) {
	for name, doc := range map[string]string{
		"traversal": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ../../../../x\n",
		"collision": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: configmap\nmetadata:\n  name: a\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "fleet")
			if err := os.MkdirAll(src, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, "a.yaml"), []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			_, stderr := runCLI(t, 2, "render", "--source", src, "--out", out)
			if !strings.Contains(stderr, "a.yaml:") {
				t.Errorf("stderr does not name the file:\n%s", stderr)
			}
			if _, err := os.Lstat(out); !os.IsNotExist(err) {
				t.Errorf("--out exists after a refused render (%v)", err)
			}
		})
	}
}
