package folder

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/parallel"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/works"
)

// renderFile is one file of a render: its name in its folder and its
// objects, one (LayoutObject) or a cluster's, as one YAML stream
// (LayoutCluster).
type renderFile struct {
	name   string
	objs   []*unstructured.Unstructured
	stream bool
}

// renderDir is one folder of a render (relative to --out) and its files.
type renderDir struct {
	rel   string
	files []renderFile
}

// writeObjects writes every object of rendered to <cluster>/<its
// works.ObjectPath> inside root, or (LayoutCluster) every cluster's objects
// to <cluster>/ClusterFile. Paths are checked, and two objects that would
// share one file are an error, before anything is written. The folders are
// then written in parallel, each opened once, and each distinct object
// encoded once by a works.YAMLEncoder (render shares an object between the
// clusters that receive it unchanged), so identical objects get identical
// bytes. prev, when not nil, is the earlier
// render being replaced: its files that hold the bytes due are linked, not
// written.
func writeObjects(root, prev *os.Root, rendered []render.Work, layout string) error {
	dirs, err := planFiles(rendered, layout)
	if err != nil {
		return err
	}
	enc := works.NewYAMLEncoder()
	return parallel.Each(len(dirs), func(i int) error {
		return writeDir(root, prev, dirs[i], enc)
	})
}

func writeDir(root, prev *os.Root, d renderDir, enc *works.YAMLEncoder) error {
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
func (f renderFile) encode(enc *works.YAMLEncoder) ([]byte, error) {
	if !f.stream {
		return enc.Encode(f.objs[0])
	}
	var out []byte
	for _, obj := range f.objs {
		b, err := enc.Encode(obj)
		if err != nil {
			return nil, err
		}
		out = append(append(append(append(out, "---\n# "...), works.ObjectPath(obj)...), '\n'), b...)
	}
	return out, nil
}

// planFiles returns the folders of a render with their files, sorted by
// folder. A path that is not plain, or a second object for one file, is an
// error, never an overwrite.
func planFiles(rendered []render.Work, layout string) ([]renderDir, error) {
	if layout == LayoutCluster {
		return planClusterFiles(rendered)
	}
	written := map[string]string{}
	byDir := map[string]*renderDir{}
	for _, work := range rendered {
		for _, obj := range work.Objects {
			key := workv1alpha1.KeyOf(obj)
			rel := path.Join(work.Cluster, key.Path()) // key.Path() is works.ObjectPath(obj)
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

// planClusterFiles is planFiles for LayoutCluster: one folder per
// cluster, holding ClusterFile.
func planClusterFiles(rendered []render.Work) ([]renderDir, error) {
	out := make([]renderDir, 0, len(rendered))
	for _, work := range rendered {
		if !filepath.IsLocal(work.Cluster) || path.Clean(work.Cluster) != work.Cluster || strings.ContainsAny(work.Cluster, `/\`) {
			return nil, fmt.Errorf("refusing to write cluster %q: its name is not a plain folder name inside --out", work.Cluster)
		}
		out = append(out, renderDir{rel: work.Cluster, files: []renderFile{{name: ClusterFile, objs: work.Objects, stream: true}}})
	}
	slices.SortFunc(out, func(a, b renderDir) int { return strings.Compare(a.rel, b.rel) })
	return out, nil
}
