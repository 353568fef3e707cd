package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/workv1alpha1"

	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/status"
)

// Exit codes of wait besides 0 (reached), 1 (timed out) and 2 (invalid
// flags, an unknown revision, a store that cannot be read): states that
// waiting cannot change, so wait says so at once.
const (
	// exitSuperseded: a newer revision already changed what a targeted
	// member runs, so it will never run REV.
	exitSuperseded = 3
	// exitNothingRecorded: the store holds no Work at all, so no
	// controller records into it.
	exitNothingRecorded = 4
	// exitNoCredentials: the hub holds no usable credential for a targeted
	// member, so nothing is applied to it until someone adds one.
	exitNoCredentials = 5
	// exitRolloutStopped: a RolloutPolicy's rollout of REV halted or
	// rolled back, so the members it did not reach will not run REV.
	exitRolloutStopped = 6
)

// history answers wait's questions about the source's commits; nil when
// --source cannot be opened (wait then only waits).
type history interface {
	Resolve(rev string) (string, error)
	IsAncestor(older, newer string) (bool, error)
}

// openHistory opens --source for wait's checks; a source that cannot be
// opened gives none (a pipeline may run wait outside any checkout).
func openHistory(ctx context.Context, location string) history {
	repo, err := source.Open(ctx, location)
	if err != nil {
		return nil
	}
	return repo
}

// checkKnown fails when --source holds the history and REV is not in it.
func checkKnown(h history, rev, location string) error {
	if h == nil {
		return nil
	}
	if _, err := h.Resolve(rev); err != nil {
		return fmt.Errorf("--revision %s is not a commit of SOURCE %s (fetch it, or give the repository's URL as SOURCE)", rev, location)
	}
	return nil
}

// superseded returns the members that will never run target: the store's
// newest revision is a descendant of target, and the member's Work was
// last changed by a revision after target. It needs the history of
// both, and says nothing when it is missing.
func superseded(h history, target, newest string, inputs []status.Input, ps []status.Progress) []status.Progress {
	if h == nil || newest == "" || status.MatchRevision(newest, target) {
		return nil
	}
	full, err := h.Resolve(target)
	if err != nil {
		return nil
	}
	if after, err := h.IsAncestor(full, newest); err != nil || !after {
		return nil // newest is not past target: not rendered yet
	}
	byCluster := map[string]string{}
	for _, in := range inputs {
		byCluster[in.Work.Spec.Cluster] = in.Work.Spec.SourceRevision
	}
	var out []status.Progress
	for _, p := range ps {
		rev := byCluster[p.Cluster]
		if p.Reached || rev == "" || status.MatchRevision(rev, target) {
			continue
		}
		if changedAfter, err := h.IsAncestor(full, rev); err == nil && changedAfter {
			out = append(out, p)
		}
	}
	return out
}

// stopError is wait's answer to a state it cannot wait out.
func stopError(code int, what string, ps []status.Progress) error {
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		names = append(names, p.Cluster)
	}
	if len(names) > 0 {
		what += ": " + strings.Join(names, ", ")
	}
	return &ExitError{Code: code, Err: errors.New(what)}
}

// withoutCredentials returns the targeted members that have not reached
// the target and whose Ready condition says the hub holds no usable
// credential for them (NoCredentials, CredentialMismatch).
func withoutCredentials(inputs []status.Input, ps []status.Progress) []status.Progress {
	reason := map[string]string{}
	for _, in := range inputs {
		if in.Status == nil {
			continue
		}
		if c := meta.FindStatusCondition(in.Status.Conditions, workv1alpha1.ConditionReady); c != nil && c.Status != metav1.ConditionTrue {
			reason[in.Work.Spec.Cluster] = c.Reason
		}
	}
	var out []status.Progress
	for _, p := range ps {
		if r := reason[p.Cluster]; !p.Reached && (r == workv1alpha1.ReasonNoCredentials || r == workv1alpha1.ReasonCredentialMismatch) {
			out = append(out, p)
		}
	}
	return out
}
