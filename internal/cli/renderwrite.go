package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
)

// renderFile is one file of a render: its name in its folder and its object.
type renderFile struct {
	name string
	obj  *unstructured.Unstructured
}

// renderDir is one folder of a render (relative to --out) and its files.
type renderDir struct {
	rel   string
	files []renderFile
}

// writeObjects writes every object of works to <cluster>/<key path> inside
// root. Paths are checked, and two objects that would share one file are an
// error, before anything is written. The folders are then written in
// parallel, each opened once, and each distinct object encoded once (render
// shares an object between the clusters that receive it unchanged), so
// identical objects get identical bytes. prev, when not nil, is the earlier
// render being replaced: its files that hold the bytes due are linked, not
// written.
func writeObjects(root, prev *os.Root, works []render.Work) error {
	dirs, err := planFiles(works)
	if err != nil {
		return err
	}
	enc := newYAMLEncoder()
	return inParallel(len(dirs), func(i int) error {
		return writeDir(root, prev, dirs[i], enc)
	})
}

func writeDir(root, prev *os.Root, d renderDir, enc *yamlEncoder) error {
	if err := root.MkdirAll(d.rel, 0o755); err != nil {
		return err
	}
	dir, err := root.OpenRoot(d.rel)
	if err != nil {
		return err
	}
	defer dir.Close()
	reuse, err := newReuser(prev, d.rel, dir)
	if err != nil {
		return err
	}
	defer reuse.close()
	for _, f := range d.files {
		b, err := enc.encode(f.obj)
		if err != nil {
			return err
		}
		linked, err := reuse.link(f.name, b)
		if err != nil {
			return fmt.Errorf("failed to reuse %s: %w", path.Join(d.rel, f.name), err)
		}
		if linked {
			continue
		}
		if err := writeNew(dir, f.name, b); err != nil {
			return err
		}
	}
	return nil
}

// writeNew writes a file that must not exist yet.
func writeNew(dir *os.Root, name string, b []byte) error {
	f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// planFiles returns the folders of a render with their files, sorted by
// folder. A path that is not plain, or a second object for one file, is an
// error, never an overwrite.
func planFiles(works []render.Work) ([]renderDir, error) {
	written := map[string]string{}
	byDir := map[string]*renderDir{}
	for _, work := range works {
		for _, obj := range work.Objects {
			key := workv1alpha1.KeyOf(obj)
			rel := path.Join(work.Cluster, key.Path())
			if !filepath.IsLocal(filepath.FromSlash(rel)) || path.Clean(rel) != rel {
				return nil, fmt.Errorf("refusing to write %s for cluster %q: its file %q is not a plain path inside --out", key, work.Cluster, rel)
			}
			if other, dup := written[rel]; dup {
				return nil, fmt.Errorf("%s and %s for cluster %q would both be written to %s", other, key, work.Cluster, rel)
			}
			written[rel] = key.String()
			dir, name := path.Split(rel)
			dir = path.Clean(dir)
			d := byDir[dir]
			if d == nil {
				d = &renderDir{rel: dir}
				byDir[dir] = d
			}
			d.files = append(d.files, renderFile{name: name, obj: obj})
		}
	}
	out := make([]renderDir, 0, len(byDir))
	for _, d := range byDir {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b renderDir) int { return strings.Compare(a.rel, b.rel) })
	return out, nil
}

// yamlEncoder turns objects into the YAML render writes, each distinct
// object once: from its Work encoding (workv1alpha1.Encoder), as yaml.Marshal
// would (JSON, then YAML with sorted keys). Safe for concurrent use.
type yamlEncoder struct {
	json *workv1alpha1.Encoder
	mu   sync.Mutex
	yaml map[*unstructured.Unstructured][]byte
}

func newYAMLEncoder() *yamlEncoder {
	return &yamlEncoder{json: workv1alpha1.NewEncoder(), yaml: map[*unstructured.Unstructured][]byte{}}
}

func (e *yamlEncoder) encode(obj *unstructured.Unstructured) ([]byte, error) {
	e.mu.Lock()
	b, ok := e.yaml[obj]
	e.mu.Unlock()
	if ok {
		return b, nil
	}
	raw, err := e.json.Encode(obj)
	if err != nil {
		return nil, err
	}
	if b, err = yaml.JSONToYAML(raw); err != nil {
		return nil, fmt.Errorf("failed to encode %s: %w", workv1alpha1.KeyOf(obj), err)
	}
	e.mu.Lock()
	e.yaml[obj] = b
	e.mu.Unlock()
	return b, nil
}

// swap puts the render written in tmp at out and then removes the earlier
// one: out is missing only between two renames (not for as long as deleting
// the earlier render takes), and if the second rename fails the earlier
// render is put back.
func swap(tmp, out string) error {
	trash, err := os.MkdirTemp(filepath.Dir(tmp), ".propagit-render-old-*")
	if err != nil {
		return err
	}
	old := filepath.Join(trash, "render")
	if err := os.Rename(out, old); err != nil {
		if rmErr := os.Remove(trash); rmErr != nil || !errors.Is(err, fs.ErrNotExist) {
			return errors.Join(err, rmErr)
		}
		return os.Rename(tmp, out)
	}
	if err := os.Rename(tmp, out); err != nil {
		return errors.Join(err, os.Rename(old, out))
	}
	if err := removeTree(old); err != nil {
		return fmt.Errorf("rendered into %s, but failed to remove the earlier render moved to %s: %w", out, old, err)
	}
	return os.Remove(trash)
}

// removeTree removes dir, its top-level entries (one per cluster) in
// parallel. dir sits in a folder of ours; if it is not a folder (out was
// replaced by a symlink after it was checked) only the link is removed.
func removeTree(dir string) error {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return os.Remove(dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if err := inParallel(len(entries), func(i int) error {
		return os.RemoveAll(filepath.Join(dir, entries[i].Name()))
	}); err != nil {
		return err
	}
	return os.Remove(dir)
}
