package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/status"
	"github.com/propagit/propagit/internal/termsafe"
)

// Bounds of wait's durations: a pipeline step must end, and polling a Git
// remote faster than this only loads it.
const (
	maxWaitTimeout  = 24 * time.Hour
	minWaitInterval = 100 * time.Millisecond
)

type waitOptions struct {
	storeReadOptions
	revision string
	forState string
	timeout  time.Duration
	// source is where a --revision that is not a hash is resolved;
	// sourceGiven says the flag was set (a hash is then checked there).
	source      string
	sourceGiven bool
}

func newWaitCommand() *cobra.Command {
	o := &waitOptions{}
	cmd := &cobra.Command{
		Use:   "wait [SOURCE] --revision REV",
		Short: "Wait until every member runs a revision, applied or healthy",
		Long: `wait polls the same Work store propagit status reads until every member
(or every --cluster) runs the source revision REV: its Work is the one the
controller recorded for REV (or a later revision that did not change it) and
the member applied exactly that content; --for healthy (the default) also
needs the Work's Ready condition True. REV is a commit hash (or a prefix of
at least 7 characters), or a branch, tag, HEAD or HEAD~1, resolved as git
rev-parse would in the repository SOURCE (or --source) names: a folder
inside a checkout (the current folder, by default: the checkout the
pipeline runs in), a bare repository, or a URL (cloned), each optionally
followed by //PATH, the fleet's folder, as diff takes it.

A line goes to stderr each time a member's state changes. wait exits 0 when
every targeted member reached REV; 1 when --timeout ran out (with a table of
each member, its applied revision, Ready and why it has not reached REV);
2 on invalid flags, a hash that a SOURCE you name holds no commit of, or
a store that cannot be read at all; and at once, without waiting out
--timeout, 3 when REV is superseded (a newer revision, after REV in
SOURCE's history, already changed what a targeted member runs, so it
will never run REV; checked when REV is a ref or SOURCE is given), 4
when the store has held no Work for 30 s (no controller records into it),
5 when a targeted member has had no usable credential on the hub for
30 s (Ready reason NoCredentials or CredentialMismatch: nothing is applied
to it until someone adds one), and 6 when a RolloutPolicy's rollout of REV
halted or rolled back (its later waves will not get REV). A member whose
wave has not opened yet has not reached REV: wait follows the waves.`,
		Example: `  # in a deploy pipeline, after the merge
  propagit wait --repo https://git.example.com/fleet.git --revision HEAD --timeout 10m
  propagit wait --works-store cr --hub-kubeconfig hub.kubeconfig --revision 3f2a9c1 --for applied --cluster prod-eu --cluster prod-us`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sourceArg(cmd, args, 0, &o.source); err != nil {
				return err
			}
			o.sourceGiven = cmd.Flags().Changed("source") || len(args) > 0
			o.source, _ = splitSource(o.source) // the history is the repository's
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.storeReadOptions.bindFlags(cmd, "wait only for these members, not every member with a Work",
		2*time.Second, "how often to read the store (at least 100ms)")
	f := cmd.Flags()
	f.StringVar(&o.revision, "revision", "", "source revision to wait for: a commit hash (or a prefix of at least 7 characters), a branch, a tag or HEAD (required)")
	bindSource(cmd, &o.source, ".", "the fleet: a folder inside a Git checkout, or REPO//PATH (REPO a URL or a bare repository), where a --revision that is not a hash is resolved; or give it as SOURCE")
	f.StringVar(&o.forState, "for", "healthy", `what each member must reach: "applied" (the revision's content applied) or "healthy" (applied and Ready)`)
	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long to wait before exiting 1 (at most 24h)")
	return cmd
}

func (o *waitOptions) validate() error {
	switch {
	case o.revision == "":
		return errors.New("--revision is required")
	case o.forState != "applied" && o.forState != "healthy":
		return fmt.Errorf(`--for must be "applied" or "healthy", not %q`, o.forState)
	case o.timeout <= 0 || o.timeout > maxWaitTimeout:
		return fmt.Errorf("--timeout %s: want more than 0 and at most %s", o.timeout, maxWaitTimeout)
	}
	return o.storeReadOptions.validate()
}

// resolveRevision turns a --revision that is not a hash prefix (a branch,
// a tag, HEAD) into the commit hash --source resolves it to. A hash is
// checked against --source only when --source was given (the default, the
// current folder, may be any repository): a hash it does not hold is
// refused. It returns the source's history for the superseded check, nil
// for a hash without --source.
func (o *waitOptions) resolveRevision(ctx context.Context, sourceGiven bool) (history, error) {
	if len(o.revision) >= status.MinRevisionPrefix && isHex(o.revision) {
		if !sourceGiven {
			return nil, nil
		}
		h := openHistory(ctx, o.source)
		if h == nil {
			_, err := source.Open(ctx, o.source)
			return nil, fmt.Errorf("source: %w", err)
		}
		return h, checkKnown(h, o.revision, o.source)
	}
	h := openHistory(ctx, o.source)
	if h == nil {
		_, err := source.Open(ctx, o.source)
		return nil, fmt.Errorf("--revision %q is not a commit hash (at least %d hex characters), and source %s cannot resolve it: %w",
			o.revision, status.MinRevisionPrefix, o.source, err)
	}
	hash, err := h.Resolve(o.revision)
	if err != nil {
		return nil, fmt.Errorf("--revision: %w", err)
	}
	o.revision = hash
	return h, nil
}

func isHex(s string) bool {
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return false
		}
	}
	return true
}

func (o *waitOptions) run(parent context.Context, stdout, stderr io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	hist, err := o.resolveRevision(orBackground(parent), o.sourceGiven)
	if err != nil {
		return err
	}
	// Members write the messages printed here: nothing reaches the
	// terminal unescaped.
	stdout, stderr = termsafe.NewWriter(stdout), termsafe.NewWriter(stderr)
	ctx, st, done, err := openStores(parent, o.repo, o.store, "propagit-wait-*")
	if err != nil {
		return err
	}
	defer done()
	target := status.Target{Revision: o.revision, Healthy: o.forState == "healthy"}
	deadline, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	w := &waiter{opts: o, target: target, stderr: stderr, seen: map[string]status.Progress{}}
	began := time.Now()
	for {
		done, err := w.poll(deadline, st)
		switch {
		case err != nil && w.last == nil && deadline.Err() == nil:
			return err // the store cannot be read at all: no point waiting
		case err != nil && deadline.Err() == nil:
			fmt.Fprintf(stderr, "failed to read the store (retrying): %v\n", err)
		case done:
			fmt.Fprintf(stdout, "%s %s on %d/%d clusters\n", workv1alpha1.DisplayRevision(o.revision), o.forState, len(w.last), len(w.last))
			return nil
		case err == nil:
			if err := w.hopeless(hist, time.Since(began)); err != nil {
				status.WriteProgress(stdout, w.last)
				return err
			}
		}
		select {
		case <-deadline.Done():
			if ctx.Err() != nil {
				return ctx.Err() // interrupted, not timed out
			}
			status.WriteProgress(stdout, w.last)
			return &ExitError{Code: 1, Err: fmt.Errorf("timed out after %s: %s", o.timeout, w.summary())}
		case <-time.After(o.interval):
		}
	}
}

// waiter remembers what the last poll saw, to report changes once.
type waiter struct {
	opts   *waitOptions
	target status.Target
	stderr io.Writer
	last   []status.Progress
	// inputs and newest are what the last poll read.
	inputs []status.Input
	newest string
	// rollouts are where the RolloutPolicies' rollouts stood at the last
	// poll.
	rollouts []status.RolloutRow
	// lastErr is the last read error, nil once a read succeeds.
	lastErr error
	seen    map[string]status.Progress
}

// poll reads the store once and reports whether every targeted member
// reached the target.
func (w *waiter) poll(ctx context.Context, st *stores) (bool, error) {
	inputs, newest, err := gather(ctx, st, w.opts.clusters)
	w.lastErr = err
	if err != nil {
		return false, err
	}
	w.inputs, w.newest = inputs, newest
	if w.rollouts, err = readRollouts(ctx, st.works); err != nil {
		return false, err
	}
	w.last = progress(inputs, newest, w.target, w.opts.clusters)
	for _, p := range w.last {
		if prev, ok := w.seen[p.Cluster]; ok && prev == p {
			continue
		}
		w.seen[p.Cluster] = p
		w.announce(p)
	}
	return reachedAll(w.last), nil
}

// nothingGrace is how long wait reads an empty store before it says that
// no controller records into it: long enough for a controller that has
// just started to record its first revision.
var nothingGrace = 30 * time.Second

// hopeless returns the error to stop with when what the last poll read
// cannot turn into the target by waiting: a newer revision already
// changed a targeted member (see superseded), the store has held no Work
// for nothingGrace, or a targeted member has had no usable credential on
// the hub for that long (someone must add one first).
func (w *waiter) hopeless(h history, waited time.Duration) error {
	if len(w.inputs) == 0 && w.newest == "" && waited >= nothingGrace {
		return &ExitError{Code: exitNothingRecorded, Err: fmt.Errorf("no Work recorded in the store after %s: is a controller recording into it?", waited.Round(time.Second))}
	}
	if s := superseded(h, w.opts.revision, w.newest, w.inputs, w.last); len(s) > 0 {
		return stopError(exitSuperseded, fmt.Sprintf("superseded: revision %s, newer than %s, changed what these members run, so they will never run %s",
			workv1alpha1.DisplayRevision(w.newest), workv1alpha1.DisplayRevision(w.opts.revision), workv1alpha1.DisplayRevision(w.opts.revision)), s)
	}
	for _, r := range w.rollouts {
		if r.Phase.Stopped() && status.MatchRevision(r.Revision, w.opts.revision) {
			return stopError(exitRolloutStopped, fmt.Sprintf("rollout stopped: %s %s revision %s: %s", r.Policy, strings.ToLower(string(r.Phase)),
				workv1alpha1.DisplayRevision(r.Revision), r.Reason), nil)
		}
	}
	if s := withoutCredentials(w.inputs, w.last); len(s) > 0 && waited >= nothingGrace {
		return stopError(exitNoCredentials, fmt.Sprintf("no credentials: the hub holds no usable credential for these members after %s, so nothing is applied to them until one is added (see propagit status)",
			waited.Round(time.Second)), s)
	}
	return nil
}

// announce prints one member's new progress on stderr, escaped.
func (w *waiter) announce(p status.Progress) {
	out := termsafe.NewWriter(w.stderr)
	if p.Reached {
		fmt.Fprintf(out, "%s: reached %s (%s)\n", p.Cluster, workv1alpha1.DisplayRevision(w.opts.revision), w.opts.forState)
	} else {
		fmt.Fprintf(out, "%s: waiting: %s\n", p.Cluster, termsafe.String(p.Message))
	}
}

// progress is where each targeted member stands, sorted by cluster; a
// named cluster without a Work is a member that has not reached anything.
func progress(inputs []status.Input, newest string, t status.Target, clusters []string) []status.Progress {
	var out []status.Progress
	for _, in := range inputs {
		out = append(out, status.Reached(in, newest, t))
	}
	for _, c := range clusters {
		if !slices.ContainsFunc(out, func(p status.Progress) bool { return p.Cluster == c }) {
			out = append(out, status.Progress{Cluster: c, Ready: "Unknown", Message: "no Work recorded for this cluster"})
		}
	}
	slices.SortFunc(out, func(a, b status.Progress) int { return strings.Compare(a.Cluster, b.Cluster) })
	return out
}

func reachedAll(ps []status.Progress) bool {
	for _, p := range ps {
		if !p.Reached {
			return false
		}
	}
	return len(ps) > 0
}

func (w *waiter) summary() string {
	switch {
	case w.last == nil && w.lastErr != nil:
		return fmt.Sprintf("the store could not be read: %v", w.lastErr)
	case len(w.last) == 0:
		return "no Works recorded yet"
	}
	n := 0
	for _, p := range w.last {
		if p.Reached {
			n++
		}
	}
	return fmt.Sprintf("%d/%d clusters reached %s (%s)", n, len(w.last), workv1alpha1.DisplayRevision(w.opts.revision), w.opts.forState)
}
