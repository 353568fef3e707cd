package load

import (
	"errors"
	"path"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// fuzzOptions are small limits, so one iteration stays within a memory cap
// whatever the input: the point is that the limits hold, kustomize included.
var fuzzOptions = Options{MaxFileBytes: 64 << 10, MaxSourceBytes: 256 << 10, MaxDocuments: 500, MaxNodes: 100_000}

// fuzzMaxAlloc is the memory cap of one iteration.
const fuzzMaxAlloc = 256 << 20

// repoTree splits a txtar-like archive ("-- path --" lines start files)
// into an in-memory source folder /src. Paths are cleaned and kept local;
// at most 32 files.
func repoTree(data []byte) filesys.FileSystem {
	fs := filesys.MakeFsInMemory()
	_ = fs.MkdirAll("/src")
	name, n := "", 0
	var body strings.Builder
	flush := func() {
		if name != "" && n < 32 {
			_ = fs.WriteFile(path.Join("/src", name), []byte(body.String()))
			n++
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "-- "); ok {
			if p, ok := strings.CutSuffix(strings.TrimRight(rest, "\n"), " --"); ok {
				flush()
				name = path.Clean("/" + p)[1:]
				continue
			}
		}
		body.WriteString(line)
	}
	flush()
	return fs
}

// FuzzLoadRepo loads whole multi-file repositories, kustomizations
// included: Load never panics, returns a Set or an *Error with problems,
// and never allocates more than fuzzMaxAlloc.
func FuzzLoadRepo(f *testing.F) {
	f.Add([]byte("-- a.yaml --\n" + deployment))
	f.Add([]byte("-- app/kustomization.yaml --\nresources:\n- cm.yaml\n- ../base\n-- app/cm.yaml --\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n" +
		"-- base/kustomization.yaml --\nresources: [d.yaml]\nnamePrefix: p-\n-- base/d.yaml --\n" + deployment))
	f.Add([]byte("-- k/kustomization.yaml --\nresources: [bomb.yaml]\n-- k/bomb.yaml --\n" + aliasBomb(9, 7)))
	f.Add([]byte("-- k/kustomization.yaml --\nsecretGenerator:\n- name: s\n  literals: [a=b, c]\n"))
	f.Add([]byte("-- k/kustomization.yaml --\nresources: [../k]\n-- x.yaml --\napiVersion: v1\nkind: configmap\nmetadata: {name: ../x, namespace: .git}\n"))
	f.Add([]byte("-- k/kustomization.yaml --\npatches:\n- path: p.yaml\nresources: [d.yaml]\n-- k/p.yaml --\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n-- k/d.yaml --\n" + deployment))
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		set, err := LoadWith(repoTree(data), "/src", fuzzOptions)
		runtime.ReadMemStats(&after)
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
		if set != nil {
			for _, tpl := range set.Templates {
				checkPathSafe(t, tpl)
			}
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > fuzzMaxAlloc {
			t.Fatalf("one load allocated %d MiB, over the %d MiB cap", alloc>>20, fuzzMaxAlloc>>20)
		}
	})
}

// checkPathSafe fails when a loaded template's identity could become a
// path component other than a plain file or folder name: render and the
// work branch build paths from namespace, kind and name.
func checkPathSafe(t *testing.T, tpl Template) {
	ns, kind, name := tpl.Object.GetNamespace(), tpl.Object.GetKind(), tpl.Object.GetName()
	for _, s := range []string{ns, kind, name} {
		if strings.ContainsAny(s, "/\x00\n") || s == "." || s == ".." {
			t.Fatalf("%s: loaded %q %q in %q: not a plain path segment", tpl.Source, kind, name, ns)
		}
	}
	if strings.HasPrefix(ns, ".") || strings.HasPrefix(kind, ".") {
		t.Fatalf("%s: loaded kind %q in namespace %q: a hidden path segment", tpl.Source, kind, ns)
	}
}
