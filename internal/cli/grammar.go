package cli

// The flags every command spells alike (docs/cli.md; TestSharedFlags
// checks them): the fleet source, -o, the controller's namespace, the
// kubeconfig flags and --cluster.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/source"
)

// secretDisplay names the Secret namespace/name as messages name every
// object (ObjectKey.Display: Secret/namespace/name).
func secretDisplay(namespace, name string) string {
	return workv1alpha1.ObjectKey{Kind: "Secret", Namespace: namespace, Name: name}.Display()
}

// bindSource binds -s/--source, the fleet source of a command that reads
// one; the command also takes it as its positional SOURCE (sourceArg).
func bindSource(cmd *cobra.Command, p *string, def, usage string) {
	cmd.Flags().StringVarP(p, "source", "s", def, usage)
}

// sourceArg takes the positional SOURCE, args[i] when given, into p. The
// source is given once: beside --source it is an error, not a guess.
func sourceArg(cmd *cobra.Command, args []string, i int, p *string) error {
	if len(args) <= i {
		return nil
	}
	if cmd.Flags().Changed("source") {
		return fmt.Errorf("the source is given twice, as SOURCE %s and as --source %s: give one", args[i], *p)
	}
	*p = args[i]
	return nil
}

// sourceOf is the source a command's completion reads: its positional
// SOURCE (args[i]) when typed already, else --source.
func sourceOf(cmd *cobra.Command, args []string, i int) string {
	if len(args) > i {
		return args[i]
	}
	return flagValue(cmd, "source")
}

// splitSource splits a source that Git holds into the repository and
// the fleet folder in it (slash-separated, "" for the root): URL//path or
// REPO//path (the form kustomize and Terraform use), a URL alone (the
// root), else a folder inside a Git checkout, whose repository is the
// checkout. A folder outside any checkout (a bare repository, or no
// repository) is returned as the repository, for source.Open to judge.
func splitSource(s string) (repo, dir string) {
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + len("://")
	}
	if i := strings.Index(s[start:], "//"); i >= 0 {
		return s[:start+i], strings.Trim(s[start+i+2:], "/")
	}
	if source.IsURL(s) {
		return s, ""
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return s, ""
	}
	root := checkoutRoot(abs)
	if root == "" {
		return s, ""
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == "." {
		return root, ""
	}
	return root, filepath.ToSlash(rel)
}

// checkoutRoot is the working tree root holding dir (the folder with a
// .git entry, a folder or a worktree's file), "" when there is none. dir
// need not exist: a pull request may add the fleet folder.
func checkoutRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// formatFlag is -o/--output: one of the command's formats, checked when
// the flag is parsed, so that a wrong value fails before anything runs
// and its error lists the valid ones.
type formatFlag struct {
	value   *string
	formats []string
	// other, when set, takes a value that is no format instead of
	// refusing it (render's deprecated -o DIR).
	other func(string)
}

var _ pflag.Value = (*formatFlag)(nil)

func (f *formatFlag) String() string { return *f.value }

func (f *formatFlag) Type() string { return "format" }

func (f *formatFlag) Set(v string) error {
	switch {
	case slices.Contains(f.formats, v):
		*f.value = v
	case f.other != nil:
		f.other(v)
	default:
		return fmt.Errorf("want one of %s", strings.Join(f.formats, ", "))
	}
	return nil
}

// bindFormat binds -o/--output to p, def by default, and completes its
// values. The value names are shared: text (for people), wide, name,
// json, yaml, markdown, sarif.
func bindFormat(cmd *cobra.Command, p *string, def string, formats []string, usage string) *formatFlag {
	*p = def
	f := &formatFlag{value: p, formats: formats}
	cmd.Flags().VarP(f, "output", "o", usage+": "+strings.Join(formats, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	return f
}

// bindControllerNamespace binds --controller-namespace to p, and -n/--namespace
// as its hidden alias, warned of when used: -n is an object's namespace
// in every command that takes one.
func bindControllerNamespace(f *pflag.FlagSet, p *string, def, usage string) {
	f.StringVar(p, "controller-namespace", def, usage)
	f.StringVarP(p, "namespace", "n", def, usage)
	_ = f.MarkDeprecated("namespace", "use --controller-namespace (-n is the namespace of an object, as in explain)")
}

// deprecateFlag hides a flag kept for one release and warns when it is
// used, saying what replaces it.
func deprecateFlag(cmd *cobra.Command, name, instead string) {
	_ = cmd.Flags().MarkDeprecated(name, "it will be removed in the next release: "+instead)
}

// bindClusters binds --cluster to p: comma-separated and repeatable, as
// on every command that takes it.
func bindClusters(f *pflag.FlagSet, p *[]string, usage string) {
	f.Var(&clusterList{names: p}, "cluster", usage+" (repeatable, or comma-separated)")
	f.Lookup("cluster").DefValue = "" // none: help shows no "(default [])"
}

// clusterList is --cluster: a string slice as pflag's, but an empty name
// (an unset variable, a stray comma) is an error, not no filter at all,
// which would mean every cluster.
type clusterList struct {
	names   *[]string
	changed bool
}

var _ pflag.SliceValue = (*clusterList)(nil)

func (c *clusterList) String() string { return "[" + strings.Join(*c.names, ",") + "]" }

func (c *clusterList) Type() string { return "stringSlice" }

// Set takes comma-separated names; the first Set replaces the default.
func (c *clusterList) Set(v string) error {
	if !c.changed {
		*c.names = nil
	}
	c.changed = true
	return c.add(strings.Split(v, ","))
}

func (c *clusterList) Append(v string) error { return c.add([]string{v}) }

func (c *clusterList) Replace(vs []string) error {
	*c.names = nil
	return c.add(vs)
}

func (c *clusterList) GetSlice() []string { return *c.names }

func (c *clusterList) add(names []string) error {
	if slices.Contains(names, "") {
		return errors.New("empty cluster name")
	}
	*c.names = append(*c.names, names...)
	return nil
}
