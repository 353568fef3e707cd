package load

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// memFS builds an in-memory source folder "/src" from path → content.
func memFS(t *testing.T, files map[string]string) filesys.FileSystem {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	if err := fs.MkdirAll("/src"); err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		if err := fs.WriteFile("/src/"+p, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

// loadFiles loads an in-memory folder.
func loadFiles(t *testing.T, files map[string]string) (*Set, error) {
	t.Helper()
	return Load(memFS(t, files), "/src")
}

// mustLoad loads an in-memory folder that must have no problem.
func mustLoad(t *testing.T, files map[string]string) *Set {
	t.Helper()
	set, err := loadFiles(t, files)
	if err != nil {
		t.Fatalf("unexpected error:\n%v", err)
	}
	return set
}

// problemsOf loads an in-memory folder that must fail and returns the
// problems' strings.
func problemsOf(t *testing.T, files map[string]string) []string {
	t.Helper()
	set, err := loadFiles(t, files)
	var lerr *Error
	if !errors.As(err, &lerr) {
		t.Fatalf("want a *load.Error, got %v", err)
	}
	if set != nil {
		t.Error("a failed load returned a Set")
	}
	out := make([]string, len(lerr.Problems))
	for i, p := range lerr.Problems {
		out[i] = p.String()
	}
	return out
}

// templateNames lists "namespace/name" (or "name") of the set's templates.
func templateNames(s *Set) []string {
	var out []string
	for _, t := range s.Templates {
		out = append(out, strings.TrimPrefix(t.Object.GetNamespace()+"/"+t.Object.GetName(), "/"))
	}
	return out
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`
