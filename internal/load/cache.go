package load

import (
	"crypto/sha256"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Cache remembers what Load parsed from each plain YAML file, by content,
// so that loading the next revision parses only the files that changed: a
// controller following a branch of thousands of files re-reads them all
// but parses one. Kustomization folders are built every time. A Cache is
// for one Load at a time.
type Cache struct {
	files map[string]*parsedFile
	// Parsed counts the files the last Load parsed (the others came from
	// the cache).
	Parsed int
	// Options are the limits of every Load; zero fields take defaults.
	Options Options
	// last holds the policy and cluster lists of the last Load (reuse),
	// and defaulted its templates given a namespace (withNamespace), by
	// the cached object they copy.
	last      Set
	defaulted map[*unstructured.Unstructured]*unstructured.Unstructured
}

// parsedFile is what one file yielded. Load hands out its template objects
// themselves, read-only: a revision that changes one file of thousands
// copies nothing of the others.
type parsedFile struct {
	sum      [sha256.Size]byte
	set      Set
	problems []Problem
	// docs and nodes are what parsing it cost, charged again on each reuse.
	docs, nodes int
}

// NewCache returns an empty Cache.
func NewCache() *Cache { return &Cache{files: map[string]*parsedFile{}} }

// Load is the package's Load, reusing what c parsed before.
//
// It applies Options, or those of a filesystem from WithOptions.
func (c *Cache) Load(fsys filesys.FileSystem, root string) (*Set, error) {
	return load(fsys, root, c, c.Options)
}

// file adds what the file at rel holding data yields to col, parsing it
// only when its content is new.
func (c *Cache) file(col *collector, rel string, data []byte, seen map[string]bool) {
	seen[rel] = true
	sum := sha256.Sum256(data)
	pf := c.files[rel]
	if pf != nil && pf.sum == sum && !col.budget.reuse(rel, pf.docs, pf.nodes) {
		return
	}
	if pf == nil || pf.sum != sum {
		docs, nodes := col.budget.docs, col.budget.nodes
		fc := &collector{budget: col.budget}
		fc.file(rel, data)
		if col.budget.exceeded {
			return // partial: never cached
		}
		pf = &parsedFile{sum: sum, set: fc.set, problems: fc.problems, docs: col.budget.docs - docs, nodes: col.budget.nodes - nodes}
		for i := range pf.set.Templates {
			pf.set.Templates[i].Digest = templateDigest(sum, i)
		}
		c.files[rel] = pf
		c.Parsed++
	}
	col.set.Templates = append(col.set.Templates, pf.set.Templates...)
	col.set.Propagations = append(col.set.Propagations, pf.set.Propagations...)
	col.set.Overrides = append(col.set.Overrides, pf.set.Overrides...)
	col.set.Clusters = append(col.set.Clusters, pf.set.Clusters...)
	col.set.Customizations = append(col.set.Customizations, pf.set.Customizations...)
	col.set.TaintPolicies = append(col.set.TaintPolicies, pf.set.TaintPolicies...)
	col.set.Rollouts = append(col.set.Rollouts, pf.set.Rollouts...)
	col.set.Findings = append(col.set.Findings, pf.set.Findings...)
	col.problems = append(col.problems, slices.Clone(pf.problems)...)
}

// templateDigest identifies the i-th template of a file by the file's
// content: same file, same templates.
func templateDigest(file [sha256.Size]byte, i int) [sha256.Size]byte {
	return sha256.Sum256(fmt.Appendf(file[:], "/%d", i))
}

// reuse gives set the lists of the last Load it equals element for
// element, so that a revision that changes no policy hands out the very
// Propagations, Overrides, Clusters and TaintPolicies (a renderer may keep
// what it worked out of them by position). Lists are read-only, as the
// objects they point to are.
func (c *Cache) reuse(set *Set) {
	same(&set.Propagations, c.last.Propagations)
	same(&set.Overrides, c.last.Overrides)
	same(&set.Clusters, c.last.Clusters)
	same(&set.TaintPolicies, c.last.TaintPolicies)
	c.last = Set{Propagations: set.Propagations, Overrides: set.Overrides, Clusters: set.Clusters, TaintPolicies: set.TaintPolicies}
}

func same[T comparable](list *[]T, last []T) {
	if len(*list) > 0 && slices.Equal(*list, last) {
		*list = last
	}
}

// withNamespace is withNamespace, handing out the copy made for the last
// Load while the cached object and the namespace are the same, so that a
// template given a namespace is the same object from one Load to the next
// like any other.
func (c *Cache) withNamespace(obj *unstructured.Unstructured, ns string, next map[*unstructured.Unstructured]*unstructured.Unstructured) *unstructured.Unstructured {
	out := c.defaulted[obj]
	if out == nil || out.GetNamespace() != ns {
		out = withNamespace(obj, ns)
	}
	next[obj] = out
	return out
}

// forget drops the files the last Load did not see.
func (c *Cache) forget(seen map[string]bool) {
	for rel := range c.files {
		if !seen[rel] {
			delete(c.files, rel)
		}
	}
}
