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
	"time"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/parallel"
	"github.com/propagit/propagit/internal/render"
)

// renderFile is one file of a render: its name in its folder and its
// objects, one (layout object) or a cluster's, as one YAML stream (layout
// cluster).
type renderFile struct {
	name   string
	objs   []*unstructured.Unstructured
	stream bool
}

// The layouts of render --out DIR.
const (
	layoutObject  = "object"
	layoutCluster = "cluster"
	// clusterFile is the file of a cluster in the cluster layout.
	clusterFile = "all.yaml"
)

var renderLayouts = []string{layoutObject, layoutCluster}

// renderDir is one folder of a render (relative to --out) and its files.
type renderDir struct {
	rel   string
	files []renderFile
}

// writeObjects writes every object of works to <cluster>/<key path> inside
// root, or (layout cluster) every cluster's objects to <cluster>/all.yaml. Paths are checked, and two objects that would share one file are an
// error, before anything is written. The folders are then written in
// parallel, each opened once, and each distinct object encoded once (render
// shares an object between the clusters that receive it unchanged), so
// identical objects get identical bytes. prev, when not nil, is the earlier
// render being replaced: its files that hold the bytes due are linked, not
// written.
func writeObjects(root, prev *os.Root, works []render.Work, layout string) error {
	dirs, err := planFiles(works, layout)
	if err != nil {
		return err
	}
	enc := newYAMLEncoder()
	return parallel.Each(len(dirs), func(i int) error {
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
		b, err := f.encode(enc)
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

// encode returns the bytes of f: its object's YAML, or the YAML stream of
// its objects, each document headed by a comment naming its key's path.
func (f renderFile) encode(enc *yamlEncoder) ([]byte, error) {
	if !f.stream {
		return enc.encode(f.objs[0])
	}
	var out []byte
	for _, obj := range f.objs {
		b, err := enc.encode(obj)
		if err != nil {
			return nil, err
		}
		out = append(append(append(append(out, "---\n# "...), workv1alpha1.KeyOf(obj).Path()...), '\n'), b...)
	}
	return out, nil
}

// planFiles returns the folders of a render with their files, sorted by
// folder. A path that is not plain, or a second object for one file, is an
// error, never an overwrite.
func planFiles(works []render.Work, layout string) ([]renderDir, error) {
	if layout == layoutCluster {
		return planClusterFiles(works)
	}
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
			d.files = append(d.files, renderFile{name: name, objs: []*unstructured.Unstructured{obj}})
		}
	}
	out := make([]renderDir, 0, len(byDir))
	for _, d := range byDir {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b renderDir) int { return strings.Compare(a.rel, b.rel) })
	return out, nil
}

// planClusterFiles is planFiles for layout cluster: one folder per
// cluster, holding all.yaml.
func planClusterFiles(works []render.Work) ([]renderDir, error) {
	out := make([]renderDir, 0, len(works))
	for _, work := range works {
		if !filepath.IsLocal(work.Cluster) || path.Clean(work.Cluster) != work.Cluster || strings.ContainsAny(work.Cluster, `/\`) {
			return nil, fmt.Errorf("refusing to write cluster %q: its name is not a plain folder name inside --out", work.Cluster)
		}
		out = append(out, renderDir{rel: work.Cluster, files: []renderFile{{name: clusterFile, objs: work.Objects, stream: true}}})
	}
	slices.SortFunc(out, func(a, b renderDir) int { return strings.Compare(a.rel, b.rel) })
	return out, nil
}

// yamlEncoder turns objects into the YAML render writes, each distinct
// object once, with the bytes yaml.Marshal gives (JSON, then YAML with
// sorted keys). Objects made only of strings, integers, booleans, nulls,
// maps and lists (almost every manifest) are marshalled directly, which
// gives the same bytes without parsing JSON back; any other value (a
// float, whose JSON may come back as an integer) goes through JSON. Safe
// for concurrent use.
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
	b, err := toYAML(obj.Object, func() ([]byte, error) { return e.json.Encode(obj) })
	if err != nil {
		return nil, fmt.Errorf("failed to encode %s: %w", workv1alpha1.KeyOf(obj), err)
	}
	e.mu.Lock()
	e.yaml[obj] = b
	e.mu.Unlock()
	return b, nil
}

// toYAML is yaml.JSONToYAML of v's JSON (raw, computed only when needed).
func toYAML(v map[string]any, raw func() ([]byte, error)) ([]byte, error) {
	if v != nil && plainJSON(v) {
		return yamlv2.Marshal(v)
	}
	j, err := raw()
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(j)
}

// plainJSON reports whether v holds only values whose YAML is the same
// marshalled directly or through JSON.
func plainJSON(v any) bool {
	switch v := v.(type) {
	case string:
		return utf8.ValidString(v) // JSON replaces invalid bytes
	case bool, nil, int64, int32, int:
		return true
	case map[string]any:
		if v == nil {
			return false // null in JSON, {} in YAML
		}
		for _, x := range v {
			if !plainJSON(x) {
				return false
			}
		}
		return true
	case []any:
		if v == nil {
			return false
		}
		for _, x := range v {
			if !plainJSON(x) {
				return false
			}
		}
		return true
	}
	return false
}

// trashPrefix names the folders swap moves an earlier render into before
// deleting it.
const trashPrefix = ".propagit-render-old-"

// staleTrashAge is how old a trash folder must be before another render
// removes it: a render that is still deleting its own is left alone.
const staleTrashAge = 10 * time.Minute

// removeStaleTrash removes, from parent, the trash folders of renders that
// died while deleting an earlier render. Only real folders named by swap
// and untouched for staleTrashAge are removed; an error is not fatal to
// the render and is returned for a warning.
func removeStaleTrash(parent string, now time.Time) error {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), trashPrefix) {
			continue // e.IsDir is false for a symlink
		}
		fi, err := e.Info()
		if err != nil || now.Sub(fi.ModTime()) < staleTrashAge {
			continue
		}
		trash := filepath.Join(parent, e.Name())
		if err := os.RemoveAll(trash); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// swap puts the render written in tmp at out and then removes the earlier
// one: out is missing only between two renames (not for as long as deleting
// the earlier render takes), and if the second rename fails the earlier
// render is put back.
func swap(tmp, out string) error {
	trash, err := os.MkdirTemp(filepath.Dir(tmp), trashPrefix+"*")
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
	if err := parallel.Each(len(entries), func(i int) error {
		return os.RemoveAll(filepath.Join(dir, entries[i].Name()))
	}); err != nil {
		return err
	}
	return os.Remove(dir)
}
