package notify

import "testing"

// While a RolloutPolicy's rollout of the revision is under way the commit
// status stays pending and says which wave, even when every member reports
// healthy (the later waves still run the stable revision); a stopped
// rollout is a failure saying why.
func TestRolloutCommitStatusFollowsWaves(t *testing.T) {
	for _, tc := range []struct {
		r           Rollout
		state, desc string
	}{
		{Rollout{Total: 4, Healthy: 4, Waves: "wave 2/3 (eu) soaking"}, StatePending, "propagit: wave 2/3 (eu) soaking, 4/4 clusters healthy"},
		{Rollout{Total: 4, Healthy: 1, Stopped: "rollout rolledback at wave 1/3 (canary): member1 failed"}, StateFailure,
			"propagit: rollout rolledback at wave 1/3 (canary): member1 failed"},
		{Rollout{Total: 4, Healthy: 4}, StateSuccess, "propagit: 4/4 clusters healthy"},
	} {
		if got := tc.r.State(); got != tc.state {
			t.Errorf("%+v: state %s, want %s", tc.r, got, tc.state)
		}
		if got := tc.r.Description(); got != tc.desc {
			t.Errorf("%+v: description %q, want %q", tc.r, got, tc.desc)
		}
	}
}
