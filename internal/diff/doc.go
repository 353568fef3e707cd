// Package diff compares two renders of a fleet, cluster by cluster, and
// formats the result for people (text, a pull-request comment in markdown)
// and for tools (JSON).
//
// Compare is pure: it reads two render.Results and returns a Report. For
// every cluster it lists the objects added, changed and removed with a
// unified diff of their final manifests, sums the workload replicas before
// and after, calls an object that leaves one cluster and arrives on another
// a move, and states deletions plainly, so that a prune is reviewed before
// it happens.
//
// Secret values never leave this package: the data and stringData of every
// Secret (and its kubectl last-applied annotation) are replaced by
// "<redacted: changed>" or "<redacted: unchanged>" before any diff is
// computed, and by "<redacted>" in Secrets that are added or removed.
package diff
