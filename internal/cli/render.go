package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/folder"
)

// sourceOptions are the flags every command that reads a source folder
// shares.
type sourceOptions struct {
	source string
	render render.Options
	limits limitOptions
	// chartCache is the folder remote Helm charts are read from, offline.
	chartCache string
}

// sourceUsage is the help of -s/--source of the commands that read a
// folder on disk.
const sourceUsage = "the fleet: a folder holding templates, policies and Cluster objects (or give it as SOURCE)"

func (o *sourceOptions) bindFlags(cmd *cobra.Command) {
	o.limits.bindFlags(cmd.Flags())
	bindSource(cmd, &o.source, ".", sourceUsage)
	o.render = render.DefaultOptions()
	bindRenderFlags(cmd.Flags(), &o.render)
	bindChartFlags(cmd.Flags(), &o.chartCache)
}

func (o *sourceOptions) load() (*load.Set, error) {
	abs, err := filepath.Abs(o.source)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("source %s: not a folder", o.source)
	}
	return load.LoadWith(filesys.MakeFsOnDisk(), abs, o.loadOptions())
}

// loadOptions are the load limits with the restriction policy, whose
// folder rules bind the source's policies as they bind its templates.
func (o *sourceOptions) loadOptions() load.Options {
	opts := o.limits.Options
	opts.Restrictions = o.render.Restrictions
	return opts
}

// input is the render of set with the render flags, the placement of
// previous (the folder of an earlier render, if not empty) being its
// history.
func (o *sourceOptions) input(set *load.Set, previous string) (render.Input, error) {
	in := render.Input{Set: set, Options: o.render, Charts: o.charts(set)}
	if previous != "" {
		prev, err := folder.Read(previous)
		if err != nil {
			return in, fmt.Errorf("failed to read --previous: %w", err)
		}
		in.Previous = render.PreviousFromWorks(prev)
	}
	return in, nil
}

type renderOptions struct {
	sourceOptions
	out    string
	output string
	// outDir is the folder of the deprecated -o DIR.
	outDir   string
	previous string
	summary  bool
	layout   string
	clusters clusterFilter
}

// renderFormats are the values of render's -o.
var renderFormats = []string{"yaml", "json", "name"}

func newRenderCommand() *cobra.Command {
	o := &renderOptions{}
	cmd := &cobra.Command{
		Use:   "render [SOURCE] --out OUT",
		Short: "Render what each member cluster receives, without any cluster",
		Long: `render reads every *.yaml/*.yml under SOURCE (folders with a
kustomization.yaml are built with kustomize), applies Karmada's matching,
scheduling and override rules, and writes, for every cluster that receives
anything, OUT/<cluster>/<namespace or _cluster>/<kind>.<group>_<name>.yaml,
or with --layout cluster one OUT/<cluster>/all.yaml holding the cluster's
objects as a YAML stream (what kustomize build prints, ready for kubectl
apply -f or a GitOps tool pointed at OUT/<cluster>).

Cluster objects may carry a status (Ready condition, resourceSummary,
apiEnablements): in render mode that is the cluster state. A Cluster with no
status is taken as Ready with every API enabled and unknown capacity.

Karmada's results depend on history (the policy that claimed a template, the
previous replicas of dynamic and aggregated division, the clusterAffinities
term in use); pass the previous render with --previous to reproduce them.

-o is the format of what is printed: with --out - (the default when -o is
given without --out) the stream of every object, as YAML documents (each
after a "# cluster/file" comment), as one JSON document
{"clusters":[{"name":…,"objects":[…]}]}, or as one line per object,
CLUSTER/Kind.group/[namespace/]name; with --out DIR, -o name lists what
was written. --cluster (repeatable, or comma-separated) keeps only the
named clusters. A folder of an earlier render (it holds a ` + folder.Marker + `
file) inside SOURCE is not read. SOURCE (or --source) defaults to the
current folder.

Deprecated: -o DIR as the output folder (its meaning before -o became the
format) still works for one release, with a warning: use --out DIR.`,
		Example: `  propagit render ./fleet --out ./rendered
  propagit render ./fleet --out ./rendered --previous ./rendered
  propagit render ./fleet --out ./rendered --layout cluster
  propagit render ./fleet --out -
  propagit render ./fleet -o name --cluster member1,member2
  propagit render --source ./fleet --summary`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sourceArg(cmd, args, 0, &o.source); err != nil {
				return err
			}
			return o.run(cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.bindFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", `output folder, or "-" for a stream on stdout`)
	bindFormat(cmd, &o.output, "yaml", renderFormats, "format of the stream, or of the listing of --out DIR").other = func(dir string) { o.outDir = dir }
	f.StringVar(&o.previous, "previous", "", "folder of an earlier render whose placement is the history")
	f.BoolVar(&o.summary, "summary", false, "write nothing: print per cluster the object count and the digest of its Work, "+
		"encoded as the controller encodes it, and one digest of the whole render (for fleets too big to write out)")
	f.StringVar(&o.layout, "layout", folder.LayoutObject, "files under --out DIR: "+folder.LayoutObject+" (one file per object) or "+
		folder.LayoutCluster+" (OUT/<cluster>/"+folder.ClusterFile+": the cluster's objects as one YAML stream, as kustomize build writes)")
	o.clusters.bindFlags(f)
	cmd.MarkFlagsOneRequired("out", "output", "summary")
	cmd.MarkFlagsMutuallyExclusive("out", "summary")
	cmd.MarkFlagsMutuallyExclusive("output", "summary")
	return cmd
}

// resolveOutput turns a deprecated -o DIR into --out DIR, and defaults
// --out to the stream when only -o is given.
func (o *renderOptions) resolveOutput(stderr io.Writer) error {
	if o.outDir != "" {
		if o.out != "" {
			return fmt.Errorf("-o %q: want one of %s", o.outDir, strings.Join(renderFormats, ", "))
		}
		fmt.Fprintf(stderr, "warning: -o %[1]s as the output folder is deprecated and will be removed in the next release: use --out %[1]s"+
			" (-o is now the output format: %[2]s)\n", o.outDir, strings.Join(renderFormats, ", "))
		o.out = o.outDir
	}
	if o.out == "" && !o.summary {
		o.out = "-"
	}
	if o.output == "json" && o.out != "-" {
		return fmt.Errorf("-o json prints a stream: use --out - (or leave --out out), not --out %s", o.out)
	}
	if !slices.Contains(folder.Layouts, o.layout) {
		return fmt.Errorf("--layout %q: want one of %s", o.layout, strings.Join(folder.Layouts, ", "))
	}
	if o.layout != folder.LayoutObject && (o.summary || o.out == "-") {
		return fmt.Errorf("--layout %s is the layout of the files of --out DIR: it does not apply to a stream or --summary", o.layout)
	}
	return nil
}

func (o *renderOptions) run(stdout, stderr io.Writer) error {
	if err := o.resolveOutput(stderr); err != nil {
		return err
	}
	set, err := o.load()
	if err != nil {
		return err
	}
	if err := o.clusters.check(set); err != nil {
		return err
	}
	in, err := o.input(set, o.previous)
	if err != nil {
		return err
	}
	res, err := renderWithin(in, o.limits.Timeout)
	if err != nil {
		return err
	}
	res = o.clusters.apply(res)
	printFindings(stderr, set, res, o.clusters)
	if o.summary {
		if err := writeSummary(stdout, res.Works); err != nil {
			return err
		}
		return renderErrors(stderr, res, in.Previous != nil)
	}
	if o.out == "-" {
		if err := writeStream(stdout, res.Works, o.output); err != nil {
			return err
		}
		return renderErrors(stderr, res, in.Previous != nil)
	}
	// A render that died while deleting the one it replaced left it in a
	// trash folder beside out.
	if err := folder.RemoveStaleTrash(filepath.Dir(filepath.Clean(o.out)), time.Now()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "warning: failed to remove what an earlier render left beside %s: %v\n", o.out, err)
	}
	if err := folder.Write(o.out, res.Works, o.layout); err != nil {
		return err
	}
	if o.output == "name" {
		writeNames(stdout, res.Works)
	}
	n := 0
	for _, w := range res.Works {
		n += len(w.Objects)
	}
	fmt.Fprintf(stderr, "rendered %d objects for %d clusters into %s\n", n, len(res.Works), o.out)
	return renderErrors(stderr, res, in.Previous != nil)
}

// renderWithin runs render.Render, giving up after d. The stage is pure and
// cannot be interrupted: a render past its deadline is abandoned, and the
// command exits.
func renderWithin(in render.Input, d time.Duration) (*render.Result, error) {
	done := make(chan *render.Result, 1)
	go func() { done <- render.Render(in) }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case res := <-done:
		return res, nil
	case <-timer.C:
		return nil, fmt.Errorf("render did not finish within %s (--load-timeout)", d)
	}
}

// printFindings reports loader findings and per-template problems (of the
// filtered clusters) on stderr; they do not stop the render. Render
// failures are renderErrors'.
func printFindings(w io.Writer, set *load.Set, res *render.Result, clusters clusterFilter) {
	for _, f := range set.Findings {
		fmt.Fprintf(w, "warning: %s\n", f)
	}
	for _, b := range res.Bindings {
		if b.ScheduleError != "" {
			kept := "it is placed nowhere"
			if b.KeptPrevious {
				kept = "the previous placement stays"
			}
			fmt.Fprintf(w, "warning: %s: %s: scheduling failed: %s (%s)\n", b.Template.Source, b.Key.Display(), b.ScheduleError, kept)
		}
		for _, t := range b.Targets {
			if t.Error != "" && t.Failure == nil && clusters.keep(t.Cluster) { // failures: renderErrors
				fmt.Fprintf(w, "warning: %s: %s: not rendered for cluster %s: %s\n", b.Template.Source, b.Key.Display(), t.Cluster, t.Error)
			}
		}
	}
}

// writeStream prints every object in format (one of renderFormats).
func writeStream(w io.Writer, rendered []render.Work, format string) error {
	switch format {
	case "name":
		writeNames(w, rendered)
		return nil
	case "json":
		return writeJSON(w, rendered)
	}
	// Objects shared between clusters are encoded once.
	enc := works.NewYAMLEncoder()
	bw := bufio.NewWriterSize(w, 1<<16)
	for _, work := range rendered {
		fmt.Fprintf(bw, "# cluster: %s\n", work.Cluster)
		for _, obj := range work.Objects {
			b, err := enc.Encode(obj)
			if err != nil {
				return err
			}
			fmt.Fprintf(bw, "---\n# %s/%s\n", work.Cluster, works.ObjectPath(obj))
			bw.Write(b)
		}
	}
	return bw.Flush()
}

// writeNames prints CLUSTER/Kind.group/[namespace/]name per object.
func writeNames(w io.Writer, works []render.Work) {
	for _, work := range works {
		for _, obj := range work.Objects {
			fmt.Fprintf(w, "%s/%s\n", work.Cluster, workv1alpha1.KeyOf(obj))
		}
	}
}

// writeJSON prints one JSON document holding every cluster's objects.
func writeJSON(w io.Writer, works []render.Work) error {
	type cluster struct {
		Name    string                       `json:"name"`
		Objects []*unstructured.Unstructured `json:"objects"`
	}
	doc := struct {
		Clusters []cluster `json:"clusters"`
	}{Clusters: []cluster{}}
	for _, work := range works {
		doc.Clusters = append(doc.Clusters, cluster{Name: work.Cluster, Objects: work.Objects})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// clusterFilter is the --cluster flag of render and diff: the clusters to
// show, named one flag each or comma-separated; empty shows all.
type clusterFilter []string

func (f *clusterFilter) bindFlags(fs *pflag.FlagSet) {
	bindClusters(fs, (*[]string)(f), "show only this cluster")
}

func (f clusterFilter) keep(name string) bool { return len(f) == 0 || slices.Contains(f, name) }

// check returns an error naming each filtered cluster that none of sets
// declares, so a typo is not an empty output.
func (f clusterFilter) check(sets ...*load.Set) error {
	known := map[string]bool{}
	for _, s := range sets {
		for _, c := range s.Clusters {
			known[c.Cluster.Name] = true
		}
	}
	for _, name := range f {
		if name == "" {
			return errors.New("--cluster: empty name")
		}
		if !known[name] {
			names := slices.Sorted(maps.Keys(known))
			if len(names) > 5 {
				names = append(names[:5], fmt.Sprintf("and %d more", len(known)-5))
			}
			return fmt.Errorf("--cluster %s: no Cluster of that name is declared (clusters: %s)", name, strings.Join(names, ", "))
		}
	}
	return nil
}

// apply returns res with the works, render errors, orphans and unclaimed
// clusters of the filtered clusters only.
func (f clusterFilter) apply(res *render.Result) *render.Result {
	if len(f) == 0 {
		return res
	}
	out := *res
	out.Works = slices.DeleteFunc(slices.Clone(res.Works), func(w render.Work) bool { return !f.keep(w.Cluster) })
	out.Errors = slices.DeleteFunc(slices.Clone(res.Errors), func(e render.RenderError) bool { return !f.keep(e.Cluster) })
	out.Orphans = slices.DeleteFunc(slices.Clone(res.Orphans), func(o render.Orphan) bool { return !f.keep(o.Cluster) })
	out.Unclaimed = nil
	for _, u := range res.Unclaimed {
		u.Clusters = slices.DeleteFunc(slices.Clone(u.Clusters), func(c string) bool { return !f.keep(c) })
		if len(u.Clusters) > 0 {
			out.Unclaimed = append(out.Unclaimed, u)
		}
	}
	return &out
}
