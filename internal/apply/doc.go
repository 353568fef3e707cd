// Package apply makes one member cluster match the objects propagit rendered
// for it. The push controller and the pull agent share it; only the client
// they pass in differs.
//
// One Apply call is, in order:
//
//  1. plan: every desired object is checked for a kind, a name and
//     duplicates; the previous inventory says which objects propagit
//     already owns.
//  2. namespaces: every namespace a desired object lives in that is not
//     itself desired is created when missing, without propagit's managed
//     label — propagit did not render it, so it is never pruned.
//  3. stages: server-side apply with field manager "propagit", definitions
//     first (CRDs, Namespaces, ClusterRoles; then *Class kinds), waiting for
//     the CRDs to be established, then everything else. Objects within a
//     stage are applied concurrently and independently: one invalid object
//     or webhook denial fails alone.
//  4. conflicts (Karmada §10.2): an object that exists on the member without
//     propagit.io/managed=true is refused when its
//     work.karmada.io/conflict-resolution annotation is not "overwrite", and
//     taken over (force-conflicts) when it is.
//  5. prune: every inventory entry no longer desired is deleted, but only
//     when the live object still carries propagit.io/managed=true.
//
// Drift detection comes from fluxcd/pkg/ssa: an object that is already on the
// member is dry-run applied and compared with the live copy, and only sent
// when it differs, so an unchanged re-apply writes nothing (two reads per
// object). An object that is neither in the inventory nor on the member is
// applied directly after one metadata read.
//
// The package returns data (Result) and never logs, emits events or writes
// status: the controller and the agent translate results into those.
package apply
