package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	src      sourceOptions
	base     string
	head     string
	repo     string
	path     string
	output   string
	exitCode bool
}

func newDiffCommand() *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff [--base REV] [--head REV]",
		Short: "Show what each cluster receives differently between two Git revisions",
		Long: `diff reads two revisions straight from Git (no checkout, no git binary),
renders both with the Cluster objects and status each one declares, and
prints, per cluster, the objects added, changed and removed with a unified
diff of their final manifests, the workload replicas before and after,
objects that move between clusters, and the deletions the change causes.

The head is rendered with the base's placement as its history, the way the
controller moves from one revision to the next. --head . (the default) is the
working tree with its uncommitted changes; --base defaults to HEAD. --repo is
a path inside a working copy, a bare repository or a URL (cloned into
memory); --path is the folder inside the repository holding the fleet.

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

Exit status: 0; with --exit-code, 1 when anything differs; 2 on any error,
such as a revision that does not load (each problem names the side, the
file and the line) or a template that fails to render at head.`,
		Example: `  propagit diff --path fleet
  propagit diff --base origin/main --head HEAD --path fleet -o markdown
  propagit diff --repo https://git.example.com/fleet.git --base v1.4.0 --head main --exit-code`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.base, "base", "HEAD", "revision to compare from: branch, tag, hash, HEAD~1, …")
	f.StringVar(&o.head, "head", source.WorkingTree, `revision to compare to; "." is the working tree with uncommitted changes`)
	f.StringVar(&o.repo, "repo", ".", "repository: a path (working copy, bare or shallow) or a URL (file://, https://, ssh://)")
	f.StringVar(&o.path, "path", "", "folder holding the fleet, relative to the repository root")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text, markdown or json")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit 1 when anything differs, 0 otherwise")
	o.src.limits.bindFlags(f)
	o.src.render = render.DefaultOptions()
	o.src.render.BindFlags(f)
	return cmd
}

func (o *diffOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	format, err := diff.ParseFormat(o.output)
	if err != nil {
		return err
	}
	opts := o.src.render
	repo, err := source.Open(ctx, o.repo)
	if err != nil {
		return err
	}
	root := path.Clean(filepath.ToSlash(o.path)) // ".." and absolute paths are refused by Tree
	if root == "." {
		root = ""
	}
	repo.SetLimits(o.src.limits.sourceLimits())
	base, err := readSide(repo, "base", o.base, root, o.src.limits)
	if err != nil {
		return err
	}
	head, err := readSide(repo, "head", o.head, root, o.src.limits)
	if err != nil {
		return err
	}
	for _, f := range head.set.Findings {
		fmt.Fprintf(stderr, "warning: head (%s): %s: %s\n", head.rev, path.Join(root, f.Source.String()), f.Message)
	}
	baseRes := render.Render(render.Input{Set: base.set, Options: opts})
	headRes := render.Render(render.Input{Set: head.set, Options: opts, Previous: render.PreviousFromWorks(baseRes.Works)})
	report := diff.Compare(diff.Input{
		Base: baseRes, Head: headRes,
		BaseRevision: base.revision(), HeadRevision: head.revision(),
		Root: root,
	})
	if err := diff.Write(stdout, report, format); err != nil {
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

// side is one loaded revision.
type side struct {
	rev source.Revision
	set *load.Set
}

func (s side) revision() diff.Revision {
	return diff.Revision{Name: s.rev.Name, Hash: s.rev.Hash, WorkingTree: s.rev.WorkingTree}
}

// readSide copies revision rev's folder dir into memory and loads it.
func readSide(repo *source.Repository, name, rev, dir string, limits limitOptions) (side, error) {
	fs := filesys.MakeFsInMemory()
	r, err := repo.Tree(rev, dir, fs)
	if err != nil {
		return side{}, fmt.Errorf("%s: %w", name, err)
	}
	set, err := load.LoadWith(fs, "/", limits.Options)
	if err != nil {
		return side{}, &sideError{side: name, rev: r, dir: dir, err: err}
	}
	return side{rev: r, set: set}, nil
}

// sideError is a revision that does not load. Every line names the side and
// the revision, and every problem's path is relative to the repository.
type sideError struct {
	side string
	rev  source.Revision
	dir  string
	err  error
}

func (e *sideError) Error() string {
	prefix := fmt.Sprintf("%s (%s): ", e.side, e.rev)
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
