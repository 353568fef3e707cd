// Package metrics holds propagit's Prometheus collectors behind one Recorder.
//
// Collectors are built unregistered; main registers them once with
// MustRegister and serves the registry on /metrics. Every name starts with
// propagit_ and every label is bounded: cluster, kind, state, result,
// provider, action. Revisions, commit SHAs and UIDs are never labels; they
// belong in status and logs.
//
// Enumerated labels (state, result, kind, provider, action) accept the values
// listed next to each method. A value outside the list is recorded as
// "other", so a caller bug shows on a dashboard instead of growing the series
// count. Cluster and object-kind labels are taken as given; ForgetCluster
// drops every series of a cluster that left Git.
//
// All methods are safe for concurrent use and do nothing on a nil *Recorder,
// so a component built without metrics needs no guard.
package metrics
