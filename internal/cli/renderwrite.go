package cli

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
)

// renderFile is one file of a render: its path inside --out and its object.
type renderFile struct {
	rel string
	obj *unstructured.Unstructured
}

// writeObjects writes every object of works to <cluster>/<key path> inside
// root. Paths are checked, and two objects that would share one file are an
// error, before anything is written. The files are then written in
// parallel, each distinct object encoded once (render shares an object
// between the clusters that receive it unchanged), so identical objects get
// identical bytes.
func writeObjects(root *os.Root, works []render.Work) error {
	files, dirs, err := planFiles(works)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	enc := newYAMLEncoder()
	return inParallel(len(files), func(i int) error {
		b, err := enc.encode(files[i].obj)
		if err != nil {
			return err
		}
		f, err := root.OpenFile(files[i].rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

// planFiles returns the file of every object and the folders they need,
// sorted. A path that is not plain, or a second object for one file, is an
// error, never an overwrite.
func planFiles(works []render.Work) ([]renderFile, []string, error) {
	var files []renderFile
	written := map[string]string{}
	dirs := map[string]bool{}
	for _, work := range works {
		for _, obj := range work.Objects {
			key := workv1alpha1.KeyOf(obj)
			rel := path.Join(work.Cluster, key.Path())
			if !filepath.IsLocal(filepath.FromSlash(rel)) || path.Clean(rel) != rel {
				return nil, nil, fmt.Errorf("refusing to write %s for cluster %q: its file %q is not a plain path inside --out", key, work.Cluster, rel)
			}
			if other, dup := written[rel]; dup {
				return nil, nil, fmt.Errorf("%s and %s for cluster %q would both be written to %s", other, key, work.Cluster, rel)
			}
			written[rel] = key.String()
			dirs[path.Dir(rel)] = true
			files = append(files, renderFile{rel: rel, obj: obj})
		}
	}
	sorted := make([]string, 0, len(dirs))
	for d := range dirs {
		sorted = append(sorted, d)
	}
	slices.Sort(sorted)
	return files, sorted, nil
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
