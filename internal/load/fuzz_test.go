package load

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// FuzzLoad feeds arbitrary bytes as one YAML file: Load must never panic,
// and returns either a Set or an *Error, never both.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(corpusDir, "*.yaml"))
	for _, s := range seeds[:min(len(seeds), 40)] {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("<<: {a: 1}\n"))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: List, items: []}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := filesys.MakeFsInMemory()
		if err := fs.WriteFile("/src/f.yaml", data); err != nil {
			t.Fatal(err)
		}
		set, err := Load(fs, "/src")
		var lerr *Error
		switch {
		case err != nil && !errors.As(err, &lerr):
			t.Fatalf("error of type %T: %v", err, err)
		case err != nil && set != nil:
			t.Fatal("both a Set and an error")
		case err == nil && set == nil:
			t.Fatal("neither a Set nor an error")
		case lerr != nil && len(lerr.Problems) == 0:
			t.Fatal("an *Error without problems")
		}
	})
}
