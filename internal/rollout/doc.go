// Package rollout is the pure planner of progressive delivery: from a
// RolloutPolicy, the clusters, what each cluster runs and reports, the
// rollout's recorded state and the time, it decides which clusters get the
// new revision of the templates the policy governs, and which keep the last
// revision that completed its rollout. It does no I/O; the controller
// records its State in the works store, so a restart resumes where the
// rollout was.
//
// The rules, in short:
//
//   - A revision that changes what a governed template renders on some
//     cluster starts a rollout. The clusters whose objects it changes take
//     part; the others are left alone.
//   - Waves open in order. A cluster belongs to the first wave whose
//     clusterAffinity it matches; clusters in no wave form the last wave,
//     "rest". Within the open wave at most maxConcurrent clusters are given
//     the revision and not yet healthy at once. A cluster not Ready when its
//     turn comes is skipped: it neither blocks nor fails the wave, and takes
//     the revision when the rollout completes.
//   - A wave is done when each of its clusters reports the revision applied
//     and healthy and all have stayed so for the wave's soak time; then the
//     next wave opens.
//   - A cluster not healthy within progressDeadline of getting the
//     revision (or of turning unhealthy), or reporting Failed, has failed.
//     Past maxFailures in one wave the rollout stops: Halt keeps every
//     cluster where it is; Rollback gives the clusters that took the
//     revision the last revision that completed its rollout.
//   - A newer revision that changes the governed objects again supersedes
//     the rollout: it starts at the first wave, and every cluster its wave
//     has not reached runs the last completed revision, so the fleet runs
//     the last completed revision or the newest, never a third.
//   - Control through Git: spec.paused stops the rollout where it is;
//     spec.abort stops it as a failure with Rollback would; a commit
//     trailer "Propagit-Rollout: skip-soak" skips the soak times of the
//     rollouts that commit starts (an urgent fix). Both fields live in the
//     policy's file, so only its owners can stop its rollouts; a trailer
//     reaches only what its own commit started.
package rollout
