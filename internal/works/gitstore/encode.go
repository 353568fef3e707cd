package gitstore

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
)

// encodeWorkWith returns the files of w's folder, by path relative to the
// folder: works.WorkFile and one YAML file (sorted keys) per manifest, each with
// its blob hash. Through memo (nil: none) it reuses the files, and their
// hashes, of manifests encoded before.
func encodeWorkWith(w *workv1alpha1.Work, memo *encodeMemo) (map[string]indexFile, error) {
	cluster := w.Spec.Cluster
	head, err := works.EncodeHead(w)
	if err != nil {
		return nil, err
	}
	files := make(map[string]indexFile, len(w.Spec.Manifests)+1)
	files[works.WorkFile] = newIndexFile(head)
	for i := range w.Spec.Manifests {
		m := &w.Spec.Manifests[i]
		f, ok := memo.get(m)
		if !ok {
			if f, err = encodeManifest(m); err != nil {
				return nil, fmt.Errorf("work %s: manifest %d: %w", cluster, i, err)
			}
			memo.put(m, f)
		}
		if _, dup := files[f.path]; dup {
			return nil, fmt.Errorf("work %s: two manifests map to %s", cluster, f.path)
		}
		files[f.path] = f.file
	}
	return files, nil
}

// newIndexFile is a regular file holding data, with its blob hash.
func newIndexFile(data []byte) indexFile {
	return indexFile{mode: filemode.Regular, hash: blobHash(data), data: data}
}

// encodedFile is one manifest's file in a cluster's folder.
type encodedFile struct {
	path string
	file indexFile
}

func encodeManifest(m *runtime.RawExtension) (encodedFile, error) {
	p, data, err := works.EncodeManifest(m)
	if err != nil {
		return encodedFile{}, err
	}
	return encodedFile{path: p, file: newIndexFile(data)}, nil
}

// encodeMemo keeps the files of the manifests one Put encoded, by their
// JSON, for the next: a commit that changes one template encodes one file
// per cluster, not the whole fleet again. It keeps only what the last Put
// used, so it does not grow.
type encodeMemo struct {
	prev, cur map[string]encodedFile
}

func (m *encodeMemo) get(r *runtime.RawExtension) (encodedFile, bool) {
	if m == nil || r.Raw == nil {
		return encodedFile{}, false
	}
	f, ok := m.cur[string(r.Raw)]
	if !ok {
		if f, ok = m.prev[string(r.Raw)]; ok {
			m.cur[string(r.Raw)] = f
		}
	}
	return f, ok
}

func (m *encodeMemo) put(r *runtime.RawExtension, f encodedFile) {
	if m != nil && r.Raw != nil {
		m.cur[string(r.Raw)] = f
	}
}

// start begins a Put: what the last one used becomes what this one may
// reuse.
func (m *encodeMemo) start() {
	m.prev, m.cur = m.cur, map[string]encodedFile{}
}
