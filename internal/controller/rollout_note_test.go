package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/rolloutv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/rollout"
)

// The commit status names the open wave of the revision's rollouts, "n/m"
// counting the rest wave, and why a stopped one stopped; rollouts of other
// revisions say nothing.
func TestRolloutCommitStatusNote(t *testing.T) {
	pol := func(name string) load.Rollout {
		return load.Rollout{Policy: &rolloutv1alpha1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
			Spec: rolloutv1alpha1.Spec{Waves: []rolloutv1alpha1.Wave{{Name: "canary"}, {Name: "eu"}}}}}
	}
	policies := []load.Rollout{pol("a"), pol("b"), pol("c")}
	plans := []rollout.Plan{
		{State: &rollout.State{Revision: "r2", Phase: rollout.Progressing, Wave: 1, WaveName: "eu", SoakingSince: time.Now()}},
		{State: &rollout.State{Revision: "r2", Phase: rollout.RolledBack, Wave: 0, WaveName: "canary", Reason: "m1 failed"}},
		{State: &rollout.State{Revision: "r1", Phase: rollout.Halted, WaveName: "canary", Reason: "old"}},
	}
	n := noteRollouts(policies, plans, "r2")
	if n.waves != "wave 2/3 (eu) soaking" || n.stopped != "rollout rolledback at wave 1/3 (canary): m1 failed" {
		t.Errorf("note %+v", n)
	}
	plans[0].State.SoakingSince = time.Time{}
	plans[1].State.Phase = rollout.Paused
	if n := noteRollouts(policies, plans, "r2"); n.waves != "wave 2/3 (eu) rolling out; paused at wave 1/3 (canary)" || n.stopped != "" {
		t.Errorf("note %+v", n)
	}
}
