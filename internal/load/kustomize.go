package load

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// buildMu serializes krusty builds: krusty keeps global state (the OpenAPI
// schema) that concurrent builds would race on.
var buildMu sync.Mutex

// build runs krusty on one kustomization folder with propagit's safe
// options: builtin plugins only (no exec, container or Helm plugins), files
// loaded from the kustomization's own folder only, and no managed-by label.
// A panic inside kustomize is returned as an error.
func build(fs filesys.FileSystem, dir string) (out []byte, err error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("kustomize panicked: %v", r)
		}
	}()
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	opts.PluginConfig = types.DisabledPluginConfig()
	opts.AddManagedbyLabel = false
	m, err := krusty.MakeKustomizer(opts).Run(fs, dir)
	if err != nil {
		return nil, err
	}
	return m.AsYaml()
}

// kustomize builds one kustomization folder and loads its output. Objects
// and problems point at the kustomization file; a problem also names the
// object it is about, since lines of kustomize's output mean nothing to
// the user.
func (l *loader) kustomize(c *collector, u unit) {
	data, err := build(l.fs, u.abs)
	if c.budget != nil && c.budget.exceeded {
		return // the budget holds the problem, at the file krusty read
	}
	if err != nil {
		msg := l.redactGenerated(strings.Join(strings.Fields(err.Error()), " "), u.abs, path.Dir(u.rel))
		msg = redactSecrets(msg, l.secrets)
		c.problems = append(c.problems, problemf(Source{Path: u.rel}, "", "kustomize build failed: %s", msg))
		return
	}
	sub := &collector{budget: c.budget, kustomized: true}
	sub.file(u.rel, data)
	if c.budget != nil && c.budget.exceeded && c.budget.problem.Source.Path == u.rel {
		c.budget.problem.Source.Line = 0 // a line of kustomize's output
		return
	}
	ids := outputIdentities(data)
	for _, p := range sub.problems {
		if id := identityAt(ids, p.Source.Line); id != "" {
			p.Message += " (in " + id + " built by kustomize)"
		}
		p.Source.Line = 0
		c.problems = append(c.problems, p)
	}
	for _, t := range sub.set.Templates {
		t.Source.Line = 0
		c.set.Templates = append(c.set.Templates, t)
	}
	for _, p := range sub.set.Propagations {
		p.Source.Line = 0
		c.set.Propagations = append(c.set.Propagations, p)
	}
	for _, o := range sub.set.Overrides {
		o.Source.Line = 0
		c.set.Overrides = append(c.set.Overrides, o)
	}
	for _, cl := range sub.set.Clusters {
		cl.Source.Line = 0
		c.set.Clusters = append(c.set.Clusters, cl)
	}
	for _, tp := range sub.set.TaintPolicies {
		tp.Source.Line = 0
		c.set.TaintPolicies = append(c.set.TaintPolicies, tp)
	}
	for _, ro := range sub.set.Rollouts {
		ro.Source.Line = 0
		c.set.Rollouts = append(c.set.Rollouts, ro)
	}
	for _, f := range sub.set.Findings {
		f.Source.Line = 0
		c.set.Findings = append(c.set.Findings, f)
	}
}

// docIdentity is the first line of one output document and its name in
// messages (describe).
type docIdentity struct {
	line int
	id   string
}

func outputIdentities(data []byte) []docIdentity {
	docs, _, _ := splitDocuments(data)
	out := make([]docIdentity, 0, len(docs))
	for _, d := range docs {
		value := func(n *yaml.Node) string {
			if n == nil {
				return ""
			}
			return n.Value
		}
		gv, _ := schema.ParseGroupVersion(value(lookup(d, "apiVersion")))
		meta := lookup(d, "metadata")
		id := describe(gv.Group, value(lookup(d, "kind")), value(lookup(meta, "namespace")), value(lookup(meta, "name")))
		out = append(out, docIdentity{line: d.Line, id: id})
	}
	return out
}

// identityAt returns the identity of the document holding line.
func identityAt(ids []docIdentity, line int) string {
	i := sort.Search(len(ids), func(i int) bool { return ids[i].line > line })
	if i == 0 {
		return ""
	}
	return ids[i-1].id
}

// minRedacted is the shortest secret value redacted from kustomize's
// errors: shorter ones would blank out ordinary words of the message.
const minRedacted = 4

// redactSecrets replaces every secret value in msg, longest first, so
// that kustomize's errors never carry secretGenerator literals into logs,
// status or pull-request comments.
func redactSecrets(msg string, secrets []string) string {
	sorted := slices.Clone(secrets)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, s := range sorted {
		if s = strings.Join(strings.Fields(s), " "); len(s) >= minRedacted {
			msg = strings.ReplaceAll(msg, s, "<redacted>")
		}
	}
	return msg
}

// generatorSources are the prefixes of kustomize's errors about the files
// and literals a generator reads (api/kv); what follows them quotes the
// content, a Secret's values included.
var generatorSources = []string{"env source files: ", "file sources: ", "literal sources "}

// redactGenerated cuts a kustomize error about a generator's sources after
// the list of sources, so no content of a secretGenerator or
// configMapGenerator reaches a log, status or pull-request comment, and
// says instead where the first line that is not UTF-8 is, in the env
// files of the kustomization in dir (rel: its folder in the source).
func (l *loader) redactGenerated(msg, dir, rel string) string {
	for _, prefix := range generatorSources {
		i := strings.Index(msg, prefix)
		if i < 0 {
			continue
		}
		list := msg[i+len(prefix):]
		end := strings.Index(list, "]")
		if !strings.HasPrefix(list, "[") || end < 0 || prefix == "literal sources " {
			return msg[:i+len(prefix)] + "(not shown): a literal is not key=value"
		}
		reason := "cannot be read (content not shown)"
		if prefix == "env source files: " {
			reason = l.envProblem(strings.Fields(list[1:end]), dir, rel)
		}
		return msg[:i+len(prefix)] + list[:end+1] + ": " + reason
	}
	return msg
}

// envProblem names the first line of files (paths relative to dir) that
// is not UTF-8, the one problem kustomize finds in an env file's content.
func (l *loader) envProblem(files []string, dir, rel string) string {
	for _, f := range files {
		data, err := l.fs.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			continue
		}
		for n, line := range bytes.Split(data, []byte("\n")) {
			if !utf8.Valid(line) {
				return fmt.Sprintf("%s:%d: not valid UTF-8 (content not shown)", path.Join(rel, f), n+1)
			}
		}
	}
	return "cannot be read (content not shown)"
}
