// Package helm renders Helm charts with the Helm SDK (helm.sh/helm/v4),
// in-process code but in a worker process: the chart is the committer's
// (or a registry's) code, so its render runs with bounded time, memory
// and output, sees only the chart's own files and no environment, and
// cannot reach the network (no lookup, no DNS, no remote JSON schema).
//
// What a render gives is what `helm template` gives for the same chart,
// values, release and capabilities: the objects of templates/ in Helm's
// install order, the CRDs of crds/ apart (applied first and never pruned
// by the caller), and the hooks apart (propagit does not run Helm's
// hook phases; the caller reports them).
package helm
