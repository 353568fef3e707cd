// Package cluster knows the member clusters at run time: it turns a Cluster
// declared in Git plus credentials that never live in Git (a kubeconfig file,
// or the hub Secret bound to the member by its propagit.io/credentials-for
// label, which the Cluster can name but never redirect) into a rest.Config, caches
// one client per member, and probes each member for the state the engine
// needs: readiness, capacity (resourceSummary) and served APIs.
package cluster
