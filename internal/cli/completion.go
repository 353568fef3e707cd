package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/diff"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/status"
)

// outputFormats are the -o values of each command, for completion.
var outputFormats = map[string][]string{
	"render": renderFormats, "diff": diff.Formats, "explain": explainFormats, "status": status.Formats,
	"install": {"yaml", "json"}, "version": {"text", "json"}, "lint": lintFormats,
}

// registerCompletions adds dynamic completion to the command tree: -o
// values, --cluster names from the source's Cluster objects (render,
// diff) and explain's KIND/NAME and -n from its templates.
func registerCompletions(root *cobra.Command) {
	for _, cmd := range root.Commands() {
		if formats, ok := outputFormats[cmd.Name()]; ok {
			_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
		}
		switch cmd.Name() {
		case "render":
			_ = cmd.RegisterFlagCompletionFunc("cluster", completeClusters(func(c *cobra.Command) string { return flagValue(c, "source") }))
		case "diff":
			_ = cmd.RegisterFlagCompletionFunc("cluster", completeClusters(diffFolder))
		case "explain":
			cmd.ValidArgsFunction = completeTemplates
			_ = cmd.RegisterFlagCompletionFunc("namespace", completeNamespaces)
		}
	}
}

func flagValue(cmd *cobra.Command, name string) string {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// diffFolder is the folder on disk whose clusters diff completes: --head-dir,
// else --path in the working copy at --repo.
func diffFolder(cmd *cobra.Command) string {
	if dir := flagValue(cmd, "head-dir"); dir != "" {
		return dir
	}
	return filepath.Join(flagValue(cmd, "repo"), filepath.FromSlash(flagValue(cmd, "path")))
}

// loadForCompletion loads dir with the default limits; nil when it does not
// load (completion then offers nothing rather than an error).
func loadForCompletion(dir string) *load.Set {
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
// the folder folder(cmd) names, those already given left out.
func completeClusters(folder func(*cobra.Command) string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		set := loadForCompletion(folder(cmd))
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
// kind.group/name as explain reads them.
func completeTemplates(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
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
func completeNamespaces(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	set := loadForCompletion(flagValue(cmd, "source"))
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
