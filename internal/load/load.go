package load

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/api/rolloutv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Load reads every *.yaml and *.yml file under root in fsys, recursively and
// document by document, skipping hidden files and folders (such as .git),
// what the root's IgnoreFile lists, folders of an earlier render (holding
// RenderMarker) and files none of whose documents is a Kubernetes object
// (each skip but the ignored is noted in Set.Findings). A
// folder holding a kustomization (kustomization.yaml, kustomization.yml or
// Kustomization) is built with krusty instead, and none of its files or
// subfolders are read one by one; a kustomization that another one uses as a
// base or component is not built on its own.
//
// fsys may be on disk or in memory. Source paths are slash-separated and
// relative to root. When anything is wrong Load returns a nil Set and an
// *Error listing every problem.
//
// Load applies DefaultOptions' limits; see LoadWith and WithOptions.
func Load(fsys filesys.FileSystem, root string) (*Set, error) {
	return load(fsys, root, nil, DefaultOptions())
}

func load(fsys filesys.FileSystem, root string, cache *Cache, opts Options) (*Set, error) {
	fsys, opts = unwrapOptions(fsys, opts)
	cfs, err := newConfinedFS(fsys, root)
	if err != nil {
		return nil, &Error{Problems: []Problem{{Source: Source{Path: "."}, Message: err.Error()}}}
	}
	b := newBudget(opts)
	cfs.budget, cfs.vetted = b, map[string]bool{}
	l := &loader{fs: cfs, visited: map[string]bool{}, chartDirs: map[string]string{}}
	l.ignore, l.problems = readIgnore(cfs)
	l.scan(cfs.root, "")
	slices.SortFunc(l.units, func(a, b unit) int { return cmp.Compare(a.rel, b.rel) })
	built := l.checkKustomizations()
	c := &collector{budget: b}
	seen := map[string]bool{}
	if cache != nil {
		cache.Parsed = 0
	}
	for _, u := range l.units {
		if b.exceeded {
			break
		}
		switch {
		case !u.kust:
			data, err := cfs.readFile(u.abs)
			switch {
			case errors.Is(err, errOverBudget):
			case err != nil:
				c.problems = append(c.problems, problemf(Source{Path: u.rel}, "", "failed to read file: %v", err))
			case cache != nil:
				cache.file(c, u.rel, data, seen)
			default:
				c.file(u.rel, data)
			}
		case built[u.abs]:
			l.kustomize(c, u)
		}
	}
	if b.exceeded {
		// Only the limit is reported: what was read before it is partial.
		return nil, &Error{Problems: []Problem{*b.problem}}
	}
	if cache != nil {
		cache.forget(seen)
	}
	l.helmCharts(c)
	c.problems = append(c.problems, l.problems...)
	c.set.Findings = append(c.set.Findings, l.findings...)
	set, err := c.finish(cache)
	if err == nil && cache != nil {
		cache.reuse(set)
	}
	return set, err
}

// unit is one file to read, or one kustomization folder to build.
type unit struct {
	rel  string // file, or kustomization file, relative to root
	abs  string // file, or kustomization folder, in the filesystem
	kust bool
}

// loader walks the source folder.
type loader struct {
	fs       *confinedFS
	units    []unit
	visited  map[string]bool
	problems []Problem
	findings []Finding
	// chartDirs are the Helm chart folders found, relative path to path
	// in the filesystem.
	chartDirs map[string]string
	// ignore matches what the root's IgnoreFile leaves out; nil without one.
	ignore gitignore.Matcher
	// secrets are the secretGenerator literals of every kustomization,
	// redacted from kustomize's errors.
	secrets []string
}

// scan collects the YAML files and kustomization folders under dir.
func (l *loader) scan(dir, rel string) {
	resolved, _ := l.fs.resolve(dir)
	if l.visited[resolved] {
		return
	}
	l.visited[resolved] = true
	names, err := l.fs.ReadDir(dir)
	if err != nil {
		l.problems = append(l.problems, problemf(Source{Path: relOrDot(rel)}, "", "failed to read folder: %v", err))
		return
	}
	slices.Sort(names)
	if earlierRender(rel, names) {
		l.findings = append(l.findings, Finding{Source: Source{Path: rel},
			Message: fmt.Sprintf("holds %s: an earlier propagit render, not read", RenderMarker)})
		return
	}
	if k := kustomizationFile(names); k != "" {
		l.units = append(l.units, unit{rel: path.Join(rel, k), abs: dir, kust: true})
		return
	}
	if isChartFolder(names) {
		l.chartDirs[rel] = dir // read only if a HelmChart names it (helmCharts)
		return
	}
	for _, name := range names {
		if strings.HasPrefix(name, ".") {
			continue
		}
		full, r := filepath.Join(dir, name), path.Join(rel, name)
		if _, ok := l.fs.resolve(full); !ok {
			l.problems = append(l.problems, problemf(Source{Path: r}, "", "points outside the source folder; it is not read"))
			continue
		}
		isDir := l.fs.IsDir(full)
		if l.ignored(r, isDir) {
			continue
		}
		if isDir {
			l.scan(full, r)
			continue
		}
		if ext := filepath.Ext(name); ext == ".yaml" || ext == ".yml" {
			l.units = append(l.units, unit{rel: r, abs: full})
		}
	}
}

// kustomizationFile returns the kustomization file among a folder's
// entries, or "".
func kustomizationFile(names []string) string {
	for _, k := range konfig.RecognizedKustomizationFileNames() {
		if slices.Contains(names, k) {
			return k
		}
	}
	return ""
}

func relOrDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// finish defaults template namespaces, finds duplicate definitions and
// returns the set, or every problem found.
func (c *collector) finish(cache *Cache) (*Set, error) {
	sc := scopesOf(c.set.Templates)
	var defaulted map[*unstructured.Unstructured]*unstructured.Unstructured
	if cache != nil {
		defaulted = map[*unstructured.Unstructured]*unstructured.Unstructured{}
		defer func() { cache.defaulted = defaulted }()
	}
	for i, t := range c.set.Templates {
		ns := t.Object.GetNamespace()
		switch {
		case sc.clusterScoped(t.Object.GroupVersionKind().GroupKind()):
			ns = ""
		case ns == "":
			ns = "default"
		}
		switch {
		case ns == t.Object.GetNamespace():
		case cache != nil:
			c.set.Templates[i].Object = cache.withNamespace(t.Object, ns, defaulted)
		default:
			c.set.Templates[i].Object = withNamespace(t.Object, ns)
		}
	}
	c.problems = append(c.problems, duplicates(&c.set)...)
	c.problems = append(c.problems, customizationConflicts(c.set.Customizations)...)
	c.admit()
	slices.SortStableFunc(c.set.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Source.Path, b.Source.Path), cmp.Compare(a.Source.Line, b.Source.Line))
	})
	if len(c.problems) > 0 {
		sortProblems(c.problems)
		return nil, &Error{Problems: c.problems}
	}
	return &c.set, nil
}

// withNamespace returns obj in namespace ns. obj may be a Cache's, shared
// with earlier Loads, and its scope depends on the whole set (a CRD beside
// it), so it is not changed: the copy shares everything but the top level
// and metadata.
func withNamespace(obj *unstructured.Unstructured, ns string) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: maps.Clone(obj.Object)}
	if md, ok := obj.Object["metadata"].(map[string]any); ok {
		out.Object["metadata"] = maps.Clone(md)
	}
	out.SetNamespace(ns)
	return out
}

// objectKey identifies an object regardless of its API version.
type objectKey struct {
	group, kind, namespace, name string
}

// String is the key's one spelling in messages (see ObjectKey.Display).
func (k objectKey) String() string {
	return workv1alpha1.ObjectKey{Group: k.group, Kind: k.kind, Namespace: k.namespace, Name: k.name}.Display()
}

// duplicates reports every object defined more than once, at each later
// definition, naming the first.
func duplicates(s *Set) []Problem {
	type entry struct {
		key objectKey
		src Source
	}
	var all []entry
	for _, t := range s.Templates {
		gvk := t.Object.GroupVersionKind()
		all = append(all, entry{objectKey{gvk.Group, gvk.Kind, t.Object.GetNamespace(), t.Object.GetName()}, t.Source})
	}
	for _, p := range s.Propagations {
		all = append(all, entry{objectKey{"policy.karmada.io", p.Policy.Kind, p.Policy.Namespace, p.Policy.Name}, p.Source})
	}
	for _, o := range s.Overrides {
		all = append(all, entry{objectKey{"policy.karmada.io", o.Policy.Kind, o.Policy.Namespace, o.Policy.Name}, o.Source})
	}
	for _, cl := range s.Clusters {
		all = append(all, entry{objectKey{"cluster.karmada.io", "Cluster", "", cl.Cluster.Name}, cl.Source})
	}
	for _, cu := range s.Customizations {
		all = append(all, entry{objectKey{"config.karmada.io", cu.Customization.Kind, "", cu.Customization.Name}, cu.Source})
	}
	for _, tp := range s.TaintPolicies {
		all = append(all, entry{objectKey{"policy.karmada.io", "ClusterTaintPolicy", "", tp.Policy.Name}, tp.Source})
	}
	for _, ro := range s.Rollouts {
		all = append(all, entry{objectKey{rolloutv1alpha1.Group, rolloutv1alpha1.Kind, ro.Policy.Namespace, ro.Policy.Name}, ro.Source})
	}
	slices.SortStableFunc(all, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.src.Path, b.src.Path), cmp.Compare(a.src.Line, b.src.Line))
	})
	first := map[objectKey]Source{}
	// folded finds kinds that differ only in case: render and the work
	// branch write both to one lower-cased file name.
	folded := map[objectKey]objectKey{}
	var out []Problem
	for _, e := range all {
		if f, dup := first[e.key]; dup {
			out = append(out, problemf(e.src, "", "%s is defined twice: first at %s", e.key, f))
			continue
		}
		fk := e.key
		fk.kind = strings.ToLower(fk.kind)
		if other, clash := folded[fk]; clash {
			out = append(out, problemf(e.src, "kind", "%s collides with %s at %s: kinds that differ only in case are one object to propagit",
				e.key, other, first[other]))
			continue
		}
		first[e.key] = e.src
		folded[fk] = e.key
	}
	return out
}
