package load

import (
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Kustomization fields that name files or folders. Folder references
// (bases, components) may point at other kustomizations.
var (
	kustDirLists  = []string{"resources", "bases", "components"}
	kustFileLists = []string{"crds", "configurations", "generators", "transformers", "validators", "patchesStrategicMerge"}
	kustPathLists = []string{"patches", "patchesJson6902", "replacements"}
	kustGenLists  = []string{"configMapGenerator", "secretGenerator"}
)

// kref is one file or folder a kustomization refers to.
type kref struct {
	field string
	value string
	line  int
	dir   bool
}

// checkKustomizations vets every kustomization before anything is built:
// remote references (git or HTTP) and paths leaving the source folder are
// problems, and such a kustomization is never built, so krusty never
// reaches for the network or the rest of the disk. It returns the folders
// to build: those that pass and that no other kustomization uses as a base.
func (l *loader) checkKustomizations() map[string]bool {
	k := &kchecker{l: l, referenced: map[string]bool{}, result: map[string]bool{}, stack: map[string]bool{}}
	for _, u := range l.units {
		if u.kust {
			k.check(u.abs)
		}
	}
	built := map[string]bool{}
	for _, u := range l.units {
		key, _ := l.fs.resolve(u.abs)
		if u.kust && k.result[key] && !k.referenced[key] {
			built[u.abs] = true
		}
	}
	return built
}

// kchecker walks kustomizations and the bases they use.
type kchecker struct {
	l          *loader
	referenced map[string]bool
	result     map[string]bool
	stack      map[string]bool
}

// check vets the kustomization in dir and, recursively, its bases.
func (k *kchecker) check(dir string) bool {
	key, _ := k.l.fs.resolve(dir)
	if r, done := k.result[key]; done {
		return r
	}
	k.stack[key] = true
	defer delete(k.stack, key)
	names, _ := k.l.fs.ReadDir(dir)
	fname := kustomizationFile(names)
	rel, err := filepath.Rel(k.l.fs.root, filepath.Join(key, fname))
	if err != nil {
		rel = fname
	}
	src := Source{Path: filepath.ToSlash(rel)}
	ok := true
	for _, r := range k.refs(filepath.Join(dir, fname)) {
		if !k.ref(dir, src, r) {
			ok = false
		}
	}
	k.result[key] = ok
	return ok
}

// ref vets one reference, following it when it is another kustomization.
func (k *kchecker) ref(dir string, src Source, r kref) bool {
	src.Line = r.line
	switch {
	case isRemote(r.value):
		k.l.problems = append(k.l.problems, problemf(src, r.field,
			"%q is a remote reference: propagit builds kustomizations from the source folder only", r.value))
		return false
	case filepath.IsAbs(r.value):
		k.l.problems = append(k.l.problems, problemf(src, r.field, "%q is an absolute path: use a path relative to the kustomization", r.value))
		return false
	}
	target := filepath.Join(dir, filepath.FromSlash(r.value))
	key, inside := k.l.fs.resolve(target)
	if !inside {
		k.l.problems = append(k.l.problems, problemf(src, r.field, "%q is outside the source folder", r.value))
		return false
	}
	if !k.l.fs.Exists(target) {
		// kustomize's own error names no line; this one names the entry.
		k.l.problems = append(k.l.problems, problemf(src, r.field, "%q does not exist: add it or remove the entry", r.value))
		return false
	}
	if !r.dir || !k.l.fs.IsDir(target) {
		return true
	}
	names, _ := k.l.fs.ReadDir(target)
	if kustomizationFile(names) == "" {
		return true
	}
	if k.stack[key] {
		k.l.problems = append(k.l.problems, problemf(src, r.field, "%q refers back to a kustomization that uses this one: cycle", r.value))
		return false
	}
	k.referenced[key] = true
	return k.check(target)
}

// refs reads the references of a kustomization file. A file that does not
// parse yields none: krusty reports it.
func (k *kchecker) refs(file string) []kref {
	data, err := k.l.fs.ReadFile(file)
	if err != nil {
		return nil
	}
	docs, _, msg := splitDocuments(data)
	if msg != "" || len(docs) == 0 || docs[0].Kind != yaml.MappingNode {
		return nil
	}
	k.l.secrets = append(k.l.secrets, secretLiterals(docs[0])...)
	return kustomizationRefs(docs[0])
}

// secretLiterals lists the values of a kustomization's secretGenerator
// literals ("key=value": the value, and the literal as written), which
// kustomize repeats in some of its errors.
func secretLiterals(n *yaml.Node) []string {
	var out []string
	for _, gen := range items(lookup(n, "secretGenerator")) {
		for _, lit := range items(lookup(gen, "literals")) {
			if lit.Kind != yaml.ScalarNode {
				continue
			}
			out = append(out, lit.Value)
			if _, v, ok := strings.Cut(lit.Value, "="); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// kustomizationRefs lists the paths a kustomization names.
func kustomizationRefs(n *yaml.Node) []kref {
	var out []kref
	strs := func(field string, list *yaml.Node, dir bool) {
		if list == nil || list.Kind != yaml.SequenceNode {
			return
		}
		for i, item := range list.Content {
			if item.Kind == yaml.ScalarNode && item.Value != "" && !strings.Contains(item.Value, "\n") {
				out = append(out, kref{field: indexPath(field, i), value: item.Value, line: item.Line, dir: dir})
			}
		}
	}
	one := func(field string, v *yaml.Node) {
		if v != nil && v.Kind == yaml.ScalarNode && v.Value != "" {
			out = append(out, kref{field: field, value: v.Value, line: v.Line})
		}
	}
	for _, f := range kustDirLists {
		strs(f, lookup(n, f), true)
	}
	for _, f := range kustFileLists {
		strs(f, lookup(n, f), false)
	}
	for _, f := range kustPathLists {
		for i, item := range items(lookup(n, f)) {
			one(indexPath(f, i)+".path", lookup(item, "path"))
		}
	}
	for _, f := range kustGenLists {
		for i, item := range items(lookup(n, f)) {
			p := indexPath(f, i)
			before := len(out)
			strs(p+".files", lookup(item, "files"), false)
			for j := before; j < len(out); j++ {
				if _, file, ok := strings.Cut(out[j].value, "="); ok {
					out[j].value = file
				}
			}
			strs(p+".envs", lookup(item, "envs"), false)
			one(p+".env", lookup(item, "env"))
		}
	}
	one("openapi.path", lookup(lookup(n, "openapi"), "path"))
	return out
}

func items(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// isRemote reports whether kustomize would fetch ref over the network: a
// URL, a go-getter style "git::" reference, a github.com path, or an
// scp-like user@host:path.
func isRemote(ref string) bool {
	lower := strings.ToLower(ref)
	if strings.Contains(lower, "://") || strings.HasPrefix(lower, "git::") ||
		strings.HasPrefix(lower, "github.com/") || strings.HasPrefix(lower, "github.com:") {
		return true
	}
	first, _, _ := strings.Cut(ref, "/")
	return strings.Contains(first, "@")
}
