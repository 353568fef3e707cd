package load

import (
	"fmt"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/restrict"
)

// Options bound the work one Load may do, so that a small hostile commit
// (an alias bomb, a huge file, many documents just under a per-document
// budget) fails the load with a problem naming the file instead of
// exhausting memory: the last good revision keeps running. Every limit
// counts across the whole source, kustomization inputs included; a zero
// field takes its default.
type Options struct {
	// MaxFileBytes bounds one file.
	MaxFileBytes int64
	// MaxSourceBytes bounds the bytes of every file read, together.
	MaxSourceBytes int64
	// MaxDocuments bounds the YAML documents of the source.
	MaxDocuments int
	// MaxNodes bounds the YAML nodes of the source, counted after aliases
	// are expanded: every file read, kustomize's inputs and outputs.
	MaxNodes int
	// Timeout bounds one Load; it is checked between files.
	Timeout time.Duration
	// DecryptKinds are the kinds that may be SOPS-encrypted besides Secret.
	DecryptKinds []string
	// Restrictions holds the policies, overrides and interpreter
	// customizations of the source to its folder rules (restrict.Policy.
	// Admit); a refused one fails the load, naming the rule. nil admits
	// all of them (the default policy has no folder rules).
	Restrictions *restrict.Policy
}

// Defaults of Options. A source of tens of thousands of ordinary manifests
// stays well inside them; under them a load stays within a few hundred MB.
const (
	DefaultMaxFileBytes   = 8 << 20
	DefaultMaxSourceBytes = 128 << 20
	DefaultMaxDocuments   = 50_000
	DefaultMaxNodes       = 8 << 20
	DefaultTimeout        = 2 * time.Minute
)

// DefaultOptions returns the default limits.
func DefaultOptions() Options {
	return Options{MaxFileBytes: DefaultMaxFileBytes, MaxSourceBytes: DefaultMaxSourceBytes,
		MaxDocuments: DefaultMaxDocuments, MaxNodes: DefaultMaxNodes, Timeout: DefaultTimeout}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = d.MaxFileBytes
	}
	if o.MaxSourceBytes <= 0 {
		o.MaxSourceBytes = d.MaxSourceBytes
	}
	if o.MaxDocuments <= 0 {
		o.MaxDocuments = d.MaxDocuments
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = d.MaxNodes
	}
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	return o
}

// LoadWith is Load with limits other than the defaults.
func LoadWith(fsys filesys.FileSystem, root string, opts Options) (*Set, error) {
	return load(fsys, root, nil, opts)
}

// WithOptions returns fsys carrying opts: Load and Cache.Load of a folder
// of the returned filesystem apply opts instead of their own. It lets the
// caller that fetches a revision choose the limits of a loader it does not
// call itself.
func WithOptions(fsys filesys.FileSystem, opts Options) filesys.FileSystem {
	return &optionsFS{FileSystem: fsys, opts: opts}
}

type optionsFS struct {
	filesys.FileSystem
	opts Options
}

// unwrapOptions returns the filesystem and options to load with.
func unwrapOptions(fsys filesys.FileSystem, opts Options) (filesys.FileSystem, Options) {
	if o, ok := fsys.(*optionsFS); ok {
		return o.FileSystem, o.opts.withDefaults()
	}
	return fsys, opts.withDefaults()
}

// budget is what is left of the Options during one Load. Once a limit is
// exceeded, the load stops reading: the problem is reported once, where it
// happened.
type budget struct {
	opts     Options
	deadline time.Time
	now      func() time.Time
	bytes    int64
	docs     int
	nodes    int
	charged  map[string]bool
	exceeded bool
	problem  *Problem
}

func newBudget(opts Options) *budget {
	return &budget{opts: opts, now: time.Now, deadline: time.Now().Add(opts.Timeout), charged: map[string]bool{}}
}

// file charges one file of size bytes, read at rel, and checks the
// deadline; false (and the problem recorded) once a limit is exceeded. A
// file read twice (a base shared by two overlays) is charged once.
func (b *budget) file(rel string, size int64) bool {
	if b.exceeded {
		return false
	}
	src := Source{Path: rel}
	switch {
	case size > b.opts.MaxFileBytes:
		b.fail(src, fmt.Sprintf("file is %d bytes, over the limit of %d bytes (--max-file-bytes)", size, b.opts.MaxFileBytes))
	case !b.charged[rel]:
		b.charged[rel] = true
		b.bytes += size
		if b.bytes > b.opts.MaxSourceBytes {
			b.fail(src, fmt.Sprintf("the source is over %d bytes in total (--max-source-bytes); reading stopped at this file", b.opts.MaxSourceBytes))
		}
	}
	if !b.exceeded && b.now().After(b.deadline) {
		b.fail(src, fmt.Sprintf("loading took longer than %s (--load-timeout); it stopped at this file", b.opts.Timeout))
	}
	return !b.exceeded
}

func (b *budget) documentsMessage() string {
	return fmt.Sprintf("the source holds more than %d YAML documents (--max-documents)", b.opts.MaxDocuments)
}

func (b *budget) nodesMessage() string {
	return fmt.Sprintf("the source expands to more than %d YAML nodes after aliases (--max-yaml-nodes)", b.opts.MaxNodes)
}

// fail records the first limit exceeded; the load stops there.
func (b *budget) fail(src Source, msg string) {
	if !b.exceeded {
		b.problem = &Problem{Source: src, Message: msg}
	}
	b.exceeded = true
}

// documentsLeft is how many more documents may be parsed (-1: no budget).
func (b *budget) documentsLeft() int {
	if b == nil {
		return -1
	}
	return max(b.opts.MaxDocuments-b.docs, 0)
}

// normalizer returns a normalizer bounded by what is left of the budget.
func (b *budget) normalizer() *normalizer {
	if b == nil {
		return &normalizer{}
	}
	left := b.opts.MaxNodes - b.nodes
	if left >= maxNodes {
		return &normalizer{}
	}
	return &normalizer{limit: max(left, 1), budgeted: true}
}

// charge charges one normalized document at src; false (and the problem
// recorded) once a limit is exceeded.
func (b *budget) charge(src Source, z *normalizer) bool {
	if b == nil {
		return true
	}
	if b.exceeded {
		return false
	}
	b.docs++
	b.nodes += z.visited
	switch {
	case b.docs > b.opts.MaxDocuments:
		b.fail(src, b.documentsMessage())
	case z.overBudget > 0 || b.nodes > b.opts.MaxNodes:
		b.fail(Source{Path: src.Path, Line: max(z.overBudget, src.Line)}, b.nodesMessage())
	}
	return !b.exceeded
}

// reuse charges a cached file's documents and nodes again; false (and the
// problem recorded) once a limit is exceeded.
func (b *budget) reuse(rel string, docs, nodes int) bool {
	b.docs += docs
	b.nodes += nodes
	switch {
	case b.docs > b.opts.MaxDocuments:
		b.fail(Source{Path: rel}, b.documentsMessage())
	case b.nodes > b.opts.MaxNodes:
		b.fail(Source{Path: rel}, b.nodesMessage())
	}
	return !b.exceeded
}
