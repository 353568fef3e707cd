// Package soak holds the chaos soak (issue 26): three controller replicas
// on a hub, two push members, one pull member, a real Git server behind a
// fault-injecting TCP proxy, a steady stream of commits, and overlapping
// faults, while invariants (convergence, nothing lost, never backwards,
// one writer, bounded resources) are checked as it runs.
//
// It is skipped unless PROPAGIT_SOAK_DURATION is set:
//
//	PROPAGIT_SOAK_DURATION=2m go test -run '^TestSoak$' -v -count=1 ./e2e/soak/
//
// PROPAGIT_SOAK_SEED replays the fault and commit schedule of a run;
// PROPAGIT_SOAK_MODE=leader runs leader-elected replicas with the Work CR
// store instead of sharded replicas with the Git store (the default,
// "shard"); PROPAGIT_SOAK_KEEP=1 keeps the event log and process logs of a
// passing run (a failing run always keeps them).
package soak
