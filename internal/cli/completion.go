package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/source"
)

// registerCompletions adds dynamic completion to the command tree (-o
// values complete where the flag is bound, bindFormat): SOURCE as a
// folder, --cluster names from the source's Cluster objects (render,
// diff) and explain's KIND/NAME and -n from its templates.
func registerCompletions(root *cobra.Command) {
	for _, cmd := range root.Commands() {
		switch cmd.Name() {
		case "render":
			cmd.ValidArgsFunction = completeSourceFolder(0)
			_ = cmd.RegisterFlagCompletionFunc("cluster", completeClusters(func(c *cobra.Command, args []string) string { return sourceOf(c, args, 0) }))
		case "diff":
			cmd.ValidArgsFunction = completeSourceFolder(0)
			_ = cmd.RegisterFlagCompletionFunc("cluster", completeClusters(diffFolder))
		case "lint", "dashboard", "wait":
			cmd.ValidArgsFunction = completeSourceFolder(0)
		case "explain":
			cmd.ValidArgsFunction = completeTemplates
			_ = cmd.RegisterFlagCompletionFunc("namespace", completeNamespaces)
		}
	}
}

// completeSourceFolder completes the positional SOURCE, args[i], with
// folders.
func completeSourceFolder(i int) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) != i {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveFilterDirs
	}
}

func flagValue(cmd *cobra.Command, name string) string {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// diffFolder is the folder on disk whose clusters diff completes:
// --head-dir, else SOURCE's folder when its repository is on disk (else
// the deprecated --path in the working copy at --repo).
func diffFolder(cmd *cobra.Command, args []string) string {
	if dir := flagValue(cmd, "head-dir"); dir != "" {
		return dir
	}
	if repo := flagValue(cmd, "repo"); repo != "" || flagValue(cmd, "path") != "" {
		return filepath.Join(repo, filepath.FromSlash(flagValue(cmd, "path")))
	}
	repo, dir := splitSource(sourceOf(cmd, args, 0))
	if source.IsURL(repo) {
		return "" // nothing on disk to read
	}
	return filepath.Join(repo, filepath.FromSlash(dir))
}

// loadForCompletion loads dir with the default limits; nil when it does not
// load (completion then offers nothing rather than an error).
func loadForCompletion(dir string) *load.Set {
	if dir == "" {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil
	}
	set, err := load.Load(filesys.MakeFsOnDisk(), abs)
	if err != nil {
		return nil
	}
	return set
}

// completeClusters completes --cluster with the Cluster names declared in
// the folder folder(cmd, args) names, those already given left out.
func completeClusters(folder func(*cobra.Command, []string) string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		set := loadForCompletion(folder(cmd, args))
		if set == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		given, _ := cmd.Flags().GetStringSlice("cluster")
		// "a,b,<TAB>" completes the last name of a comma-separated list.
		done, prefix := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, prefix = toComplete[:i+1], toComplete[i+1:]
			given = append(given, strings.Split(done, ",")...)
		}
		var out []cobra.Completion
		for _, c := range set.Clusters {
			if name := c.Cluster.Name; strings.HasPrefix(name, prefix) && !slices.Contains(given, name) {
				out = append(out, done+name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeTemplates completes explain's KIND/NAME with the templates of
// --source in the namespace of -n (and the cluster-scoped ones), written
// kind.group/name as explain reads them, and then SOURCE with folders.
func completeTemplates(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return completeSourceFolder(1)(cmd, args, toComplete)
	}
	set := loadForCompletion(flagValue(cmd, "source"))
	if set == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	namespace := flagValue(cmd, "namespace")
	var out []cobra.Completion
	for _, t := range set.Templates {
		obj := t.Object
		if ns := obj.GetNamespace(); ns != "" && ns != namespace {
			continue
		}
		gvk := obj.GroupVersionKind()
		ref := kindName(schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}) + "/" + obj.GetName()
		if strings.HasPrefix(strings.ToLower(ref), strings.ToLower(toComplete)) && !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	slices.Sort(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeNamespaces completes explain's -n with the namespaces of the
// templates of --source.
func completeNamespaces(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	set := loadForCompletion(sourceOf(cmd, args, 1))
	if set == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, t := range set.Templates {
		if ns := t.Object.GetNamespace(); ns != "" && strings.HasPrefix(ns, toComplete) && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}
