// Package observe tells the hub what state each member is in, for the
// scheduler and for the push workers: push members by probing them
// (readiness with hysteresis, a result reused for the probe interval), pull
// members from the status their agent reported (Ready turns Unknown when
// the heartbeat goes stale). Every member is observed in parallel, each
// call under its own timeout, and a failure is logged, never swallowed: one
// slow member or store cannot hold up the pass.
package observe
