// Package soak holds the chaos soak (issue 26): real controller replicas
// sharded over a hub, two push members, one pull member, a real Git server
// behind a fault-injecting TCP proxy, a steady stream of commits, and
// overlapping faults, while invariants (convergence, nothing lost, never
// backwards, one writer, bounded resources) are checked as it runs.
//
// It is skipped unless PROPAGIT_SOAK_DURATION is set:
//
//	PROPAGIT_SOAK_DURATION=2m go test -run '^TestSoak$' -v -count=1 ./e2e/soak/
//
// PROPAGIT_SOAK_SEED replays the fault and commit schedule of a run.
package soak
