package cli

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/pflag"

	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/restrict"
)

// bindRenderFlags binds the render flags to o with its current values as
// defaults: call it on render.DefaultOptions(). Every command that renders
// (render, lint, explain, diff, controller) binds them here, so a CI render
// and the controller decide alike. The engine reads no file: the
// restriction policy is loaded here, when the flag is parsed.
func bindRenderFlags(fs *pflag.FlagSet, o *render.Options) {
	fs.Var(&namespacePatterns{res: &o.SkippedNamespaces}, "skipped-namespaces",
		"regular expressions (anchored) of namespaces never propagated (Karmada's --skipped-propagating-namespaces); "+
			"karmada-system, karmada-cluster and karmada-es-* are always skipped")
	fs.BoolVar(&o.NamespaceAutoPropagation, "namespace-auto-propagation", o.NamespaceAutoPropagation,
		"copy every Namespace to every cluster without a policy (Karmada's namespace controller; false is --controllers=*,-namespace): "+
			"ClusterPropagationPolicies that select Namespaces place them either way")
	fs.Var(&restrictionsFile{policy: &o.Restrictions}, "restrictions",
		"file holding the restriction policy: what committers may deploy (namespaces, cluster-scoped kinds, lifted denials); "+
			"keep it outside the fleet repository. Without it cluster-admin bindings, admission webhooks and privileged pods in system namespaces are refused")
}

// restrictionsFile is a pflag.Value that loads a restriction policy file
// when the flag is parsed, so a bad file fails at start.
type restrictionsFile struct {
	policy *(*restrict.Policy)
	file   string
}

func (r *restrictionsFile) String() string { return r.file }

func (r *restrictionsFile) Type() string { return "file" }

func (r *restrictionsFile) Set(file string) error {
	p, err := restrict.Load(file)
	if err != nil {
		return err
	}
	r.file, *r.policy = file, p
	return nil
}

// namespacePatterns is a pflag.Value of anchored regular expressions; an
// invalid pattern fails flag parsing. The first Set replaces the defaults,
// later ones append, as pflag's string slices do.
type namespacePatterns struct {
	res     *[]*regexp.Regexp
	changed bool
}

var _ pflag.SliceValue = (*namespacePatterns)(nil)

func (p *namespacePatterns) String() string { return "[" + strings.Join(p.GetSlice(), ",") + "]" }

func (p *namespacePatterns) Type() string { return "strings" }

// Set takes comma-separated patterns.
func (p *namespacePatterns) Set(v string) error {
	err := p.set(strings.Split(v, ","), !p.changed)
	p.changed = true
	return err
}

func (p *namespacePatterns) Append(v string) error { return p.set([]string{v}, false) }

func (p *namespacePatterns) Replace(vs []string) error { return p.set(vs, true) }

func (p *namespacePatterns) GetSlice() []string {
	var out []string
	for _, re := range *p.res {
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(re.String(), "^(?:"), ")$"))
	}
	return out
}

func (p *namespacePatterns) set(vs []string, replace bool) error {
	var out []*regexp.Regexp
	if !replace {
		out = *p.res
	}
	for _, s := range vs {
		re, err := regexp.Compile("^(?:" + s + ")$")
		if err != nil {
			return fmt.Errorf("invalid namespace pattern %q: %w", s, err)
		}
		out = append(out, re)
	}
	*p.res = out
	return nil
}
