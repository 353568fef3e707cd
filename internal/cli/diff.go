package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/diff"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/source"
)

type diffOptions struct {
	src  sourceOptions
	base string
	head string
	// repo and path are the deprecated --repo and --path, which SOURCE
	// replaces.
	repo     string
	path     string
	baseDir  string
	headDir  string
	output   string
	exitCode bool
	clusters clusterFilter
	verify   diffVerify
}

func newDiffCommand() *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff [SOURCE] [--base REV] [--head REV]",
		Short: "Show what each cluster receives differently between two Git revisions",
		Long: `diff reads two revisions straight from Git (no checkout, no git binary),
renders both with the Cluster objects and status each one declares, and
prints, per cluster, the objects added, changed and removed with a unified
diff of their final manifests, the workload replicas before and after,
objects that move between clusters, and the deletions the change causes.

The head is rendered with the base's placement as its history, the way the
controller moves from one revision to the next. --head . (the default) is the
working tree with its uncommitted changes; --base defaults to HEAD. SOURCE
(or --source) is the fleet: a folder inside a Git checkout (the current
folder by default), or REPO//PATH, REPO being a URL (cloned into memory), a
bare repository or a checkout, and PATH the fleet's folder in it.

Secret data and stringData values never appear: they show as
<redacted: changed> or <redacted: unchanged>.

-o markdown is made for a pull-request comment: its first line is the marker
` + diff.Marker + ` and it stays under GitHub's 65,536-character limit.

A template that fails to render for a cluster at head (an override that
does not apply, an invalid object) is reported as "` + diff.RenderErrorText + `",
never as a deletion. A template no policy selects any more is "unclaimed"
and keeps running where it was; only removing a template from Git deletes
its objects, unless its policy says preserveResourcesOnDeletion: true or
the template propagit.io/prune: disabled (then they are kept, no longer
managed).

A fleet folder that exists on one side only is a pull request
adding or removing the fleet: everything is added, or removed. --base-dir
and --head-dir compare two folders on disk instead, without Git (a CI job
that checked both sides out, a render of another tool's output).
--cluster (repeatable, or comma-separated) reports only the named clusters.

Exit status: 0; with --exit-code, 1 when anything differs; 2 on any error,
such as a revision that does not load (each problem names the side, the
file and the line) or a template that fails to render at head.`,
		Example: `  propagit diff fleet
  propagit diff fleet --base origin/main --head HEAD -o markdown
  propagit diff https://git.example.com/fleet.git//clusters/prod --base v1.4.0 --head main --exit-code
  propagit diff --base-dir ./base/fleet --head-dir ./fleet --cluster prod-eu,prod-us`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sourceArg(cmd, args, 0, &o.src.source); err != nil {
				return err
			}
			if err := o.checkDirFlags(cmd, len(args) > 0); err != nil {
				return err
			}
			if err := o.locate(cmd, len(args) > 0); err != nil {
				return err
			}
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.base, "base", "HEAD", "revision to compare from: branch, tag, hash, HEAD~1, …")
	f.StringVar(&o.head, "head", source.WorkingTree, `revision to compare to; "." is the working tree with uncommitted changes`)
	bindSource(cmd, &o.src.source, ".", "the fleet: a folder inside a Git checkout, or REPO//PATH (REPO a URL, a bare repository or a checkout); or give it as SOURCE")
	f.StringVar(&o.repo, "repo", "", "repository: a path (working copy, bare or shallow) or a URL (file://, https://, ssh://)")
	f.StringVar(&o.path, "path", "", "folder holding the fleet, relative to the repository root")
	deprecateFlag(cmd, "repo", "give the fleet as SOURCE (or --source): a folder inside the checkout, or REPO//PATH")
	deprecateFlag(cmd, "path", "give the fleet as SOURCE (or --source): a folder inside the checkout, or REPO//PATH")
	f.StringVar(&o.baseDir, "base-dir", "", "folder on disk to compare from, instead of a Git revision (with --head-dir)")
	f.StringVar(&o.headDir, "head-dir", "", "folder on disk to compare to, instead of a Git revision (with --base-dir)")
	bindFormat(cmd, &o.output, string(diff.Text), diff.Formats, "output format")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit 1 when anything differs, 0 otherwise")
	o.clusters.bindFlags(f)
	o.src.limits.bindFlags(f)
	o.src.render = render.DefaultOptions()
	bindRenderFlags(f, &o.src.render)
	bindChartFlags(f, &o.src.chartCache)
	o.verify.bind(cmd)
	return cmd
}

// checkDirFlags refuses --base-dir without --head-dir (and the reverse),
// and either with a source or a flag that reads Git; positional says
// SOURCE was given.
func (o *diffOptions) checkDirFlags(cmd *cobra.Command, positional bool) error {
	if o.baseDir == "" && o.headDir == "" {
		return nil
	}
	if o.baseDir == "" || o.headDir == "" {
		return errors.New("--base-dir and --head-dir go together")
	}
	if positional {
		return fmt.Errorf("SOURCE %s reads Git; --base-dir and --head-dir compare folders on disk", o.src.source)
	}
	for _, name := range []string{"base", "head", "source", "repo", "path", "trusted-keys"} {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s reads Git; --base-dir and --head-dir compare folders on disk", name)
		}
	}
	return nil
}

// locate sets the repository and fleet folder to read from SOURCE, or
// from the deprecated --repo and --path (the repository's root, and the
// checkout around the current folder, by default), never from both.
func (o *diffOptions) locate(cmd *cobra.Command, positional bool) error {
	if !cmd.Flags().Changed("repo") && !cmd.Flags().Changed("path") {
		o.repo, o.path = splitSource(o.src.source)
		return nil
	}
	if positional || cmd.Flags().Changed("source") {
		return errors.New("SOURCE (or --source) names the repository and the folder: drop --repo and --path")
	}
	if o.repo == "" {
		o.repo = "."
	}
	return nil
}

func (o *diffOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	format, err := diff.ParseFormat(o.output)
	if err != nil {
		return err
	}
	base, head, root, err := o.readSides(ctx)
	if err != nil {
		return err
	}
	if err := o.clusters.check(base.set, head.set); err != nil {
		return err
	}
	if base.missing != "" {
		fmt.Fprintf(stderr, "note: %s: everything is added\n", base.missing)
	}
	if head.missing != "" {
		fmt.Fprintf(stderr, "note: %s: everything is removed\n", head.missing)
	}
	for _, f := range head.set.Findings {
		fmt.Fprintf(stderr, "warning: head (%s): %s: %s\n", head.label, path.Join(root, f.Source.String()), f.Message)
	}
	opts := o.src.render
	baseRes := render.Render(render.Input{Set: base.set, Options: opts, Charts: o.src.charts(base.set)})
	headRes := render.Render(render.Input{Set: head.set, Options: opts, Previous: render.PreviousFromWorks(baseRes.Works), Charts: o.src.charts(head.set)})
	report := diff.Compare(diff.Input{
		Base: baseRes, Head: headRes,
		BaseRevision: base.revision, HeadRevision: head.revision,
		Root: root, Clusters: o.clusters, Rollouts: head.set.Rollouts,
	})
	if err := o.verify.write(stdout, report, format, base.revision, head.revision); err != nil {
		return err
	}
	if n := len(report.RenderErrors); n > 0 {
		return &ExitError{Code: 2, Err: fmt.Errorf("head: %s: a template fails to render for a cluster, which keeps its current objects", count(n, "render error"))}
	}
	if o.exitCode && report.Differs {
		return &ExitError{Code: 1}
	}
	return nil
}

// readSides loads both sides, from Git or from --base-dir and --head-dir,
// and returns the folder (relative to the repository) they were read from.
// A side without the folder is empty; both without it is an error.
func (o *diffOptions) readSides(ctx context.Context) (base, head side, root string, err error) {
	if o.baseDir != "" {
		if base, err = readDir("base", o.baseDir, o.src.loadOptions()); err == nil {
			head, err = readDir("head", o.headDir, o.src.loadOptions())
		}
	} else {
		root = path.Clean(filepath.ToSlash(o.path)) // ".." and absolute paths are refused by Tree
		if root == "." {
			root = ""
		}
		var repo *source.Repository
		if repo, err = source.Open(ctx, o.repo); err != nil {
			return side{}, side{}, "", err
		}
		repo.SetLimits(o.src.limits.sourceLimits())
		o.verify.repo = repo
		if base, err = readSide(repo, "base", o.base, root, o.src.loadOptions()); err == nil {
			head, err = readSide(repo, "head", o.head, root, o.src.loadOptions())
		}
	}
	if err == nil && base.missing != "" && head.missing != "" {
		err = fmt.Errorf("nothing to compare: %s, and %s", base.missing, head.missing)
	}
	return base, head, root, err
}

// side is one loaded revision or folder.
type side struct {
	name     string // "base" or "head"
	label    string // the short hash, "working tree" or the folder, for messages
	revision diff.Revision
	set      *load.Set
	// missing, when the side has no such folder, says so; its set is then
	// empty.
	missing string
}

// readSide copies revision rev's folder dir into memory and loads it.
func readSide(repo *source.Repository, name, rev, dir string, opts load.Options) (side, error) {
	mem := filesys.MakeFsInMemory()
	r, err := repo.Tree(rev, dir, mem)
	s := side{name: name, label: r.String(), revision: diff.Revision{Name: r.Name, Hash: r.Hash, WorkingTree: r.WorkingTree}}
	switch {
	case errors.Is(err, source.ErrFolderNotFound):
		folder := dir
		if folder == "" {
			folder = "."
		}
		s.set, s.missing = &load.Set{}, fmt.Sprintf("%s (%s) has no folder %q", name, s.label, folder)
		return s, nil
	case err != nil:
		return side{}, fmt.Errorf("%s: %w", name, err)
	}
	if s.set, err = load.LoadWith(mem, "/", opts); err != nil {
		return side{}, &sideError{side: name, label: s.label, dir: dir, err: err}
	}
	return s, nil
}

// readDir loads a folder on disk as one side; a missing folder is empty.
func readDir(name, dir string, opts load.Options) (side, error) {
	s := side{name: name, label: dir, revision: diff.Revision{Name: dir}}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return side{}, err
	}
	switch fi, err := os.Stat(abs); {
	case errors.Is(err, fs.ErrNotExist):
		s.set, s.missing = &load.Set{}, fmt.Sprintf("--%s-dir %s does not exist", name, dir)
		return s, nil
	case err != nil:
		return side{}, fmt.Errorf("--%s-dir: %w", name, err)
	case !fi.IsDir():
		return side{}, fmt.Errorf("--%s-dir %s: not a folder", name, dir)
	}
	if s.set, err = load.LoadWith(filesys.MakeFsOnDisk(), abs, opts); err != nil {
		return side{}, &sideError{side: name, label: dir, err: err}
	}
	return s, nil
}

// sideError is a revision that does not load. Every line names the side and
// the revision, and every problem's path is relative to the repository.
type sideError struct {
	side  string
	label string
	dir   string
	err   error
}

func (e *sideError) Error() string {
	prefix := fmt.Sprintf("%s (%s): ", e.side, e.label)
	var le *load.Error
	if !errors.As(e.err, &le) {
		return prefix + e.err.Error()
	}
	lines := make([]string, len(le.Problems))
	for i, p := range le.Problems {
		p.Source.Path = path.Join(e.dir, p.Source.Path)
		lines[i] = prefix + p.String()
	}
	return strings.Join(lines, "\n")
}

func (e *sideError) Unwrap() error { return e.err }
