// Package folder reads and writes, on disk, the per-cluster folders of a
// render: what `propagit render --out` writes and `--previous` reads. A
// cluster's folder holds one file per object at works.ObjectPath with the
// bytes of works.YAMLEncoder, the very files of the cluster's folder on
// the work branch (less works.WorkFile), or, in the cluster layout, one
// stream of them. The writer never deletes a folder it did not write (it
// leaves Marker in every folder it writes) and never follows a symlink.
package folder

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// Marker is the file Write leaves in a folder it wrote, so a later Write
// may replace it (any other non-empty folder is refused) and a load of a
// source that contains it skips it. load declares the name, since it reads
// sources before anything is rendered.
const Marker = load.RenderMarker

// The layouts of a render's folder.
const (
	// LayoutObject writes one file per object, at works.ObjectPath in
	// its cluster's folder.
	LayoutObject = "object"
	// LayoutCluster writes one ClusterFile per cluster: the cluster's
	// objects as one YAML stream, as kustomize build writes.
	LayoutCluster = "cluster"
	// ClusterFile is the file of a cluster in LayoutCluster.
	ClusterFile = "all.yaml"
)

// Layouts are the layouts Write knows.
var Layouts = []string{LayoutObject, LayoutCluster}

// Write writes rendered into out, replacing an earlier render there.
// out must be missing, an empty folder or a folder holding Marker:
// anything else (a file, a symlink, a folder of the user's) is refused, so
// nothing of the user's is deleted by surprise. Files are written through an
// os.Root on a fresh folder beside out, so no name can reach outside it, and
// two objects that would share one file are an error. Files of the earlier
// render that already hold the right bytes are linked into the fresh folder
// rather than written again (see reuser), and the fresh folder then takes
// out's place (see swap).
func Write(out string, rendered []render.Work, layout string) error {
	if err := replaceable(out); err != nil {
		return err
	}
	parent := filepath.Dir(filepath.Clean(out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, ".propagit-render-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return err
	}
	defer root.Close()
	prev, err := openEarlierRender(out)
	if err != nil {
		return err
	}
	if prev != nil {
		defer prev.Close()
	}
	if err := writeObjects(root, prev, rendered, layout); err != nil {
		return err
	}
	if err := root.WriteFile(Marker, []byte("written by propagit render; this folder is replaced on the next render\n"), 0o644); err != nil {
		return err
	}
	if err := replaceable(out); err != nil {
		return err
	}
	return swap(tmp, out)
}

// openEarlierRender opens out when it is a folder holding an earlier
// render, and returns nil when it is not (missing or empty).
func openEarlierRender(out string) (*os.Root, error) {
	if m, err := os.Lstat(filepath.Join(out, Marker)); err != nil || !m.Mode().IsRegular() {
		return nil, nil
	}
	fi, err := os.Lstat(out)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(out)
	if err != nil {
		return nil, err
	}
	// out replaced by a symlink since it was checked: reuse nothing.
	if opened, err := root.Stat("."); err != nil || !os.SameFile(fi, opened) {
		root.Close()
		return nil, err
	}
	return root, nil
}

// replaceable returns an error unless out is missing, an empty folder or an
// earlier render (a real folder holding a regular Marker file).
func replaceable(out string) error {
	fi, err := os.Lstat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("refusing to write into %s: it is not a folder (a render replaces only an empty folder or an earlier render)", out)
	}
	entries, err := os.ReadDir(out)
	if err != nil || len(entries) == 0 {
		return err
	}
	if m, err := os.Lstat(filepath.Join(out, Marker)); err != nil || !m.Mode().IsRegular() {
		return fmt.Errorf("refusing to write into %s: it is not empty and was not written by propagit render (no %s file)", out, Marker)
	}
	return nil
}

// Read reads a folder written by Write, in either layout, back into Works.
func Read(dir string) ([]render.Work, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var works []render.Work
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		w := render.Work{Cluster: e.Name()}
		err := filepath.WalkDir(filepath.Join(dir, e.Name()), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
				return err
			}
			objs, err := readFile(path)
			w.Objects = append(w.Objects, objs...)
			return err
		})
		if err != nil {
			return nil, err
		}
		works = append(works, w)
	}
	return works, nil
}

// readFile reads the objects of one file of a render: one object, or a
// YAML stream of them (LayoutCluster).
func readFile(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var objs []*unstructured.Unstructured
	docs := utilyaml.NewYAMLReader(bufio.NewReader(f))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}
