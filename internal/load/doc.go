// Package load turns a folder of a Git tree into the inputs of the pipeline:
// templates (ordinary Kubernetes objects), propagation and override policies,
// and member clusters.
//
// Every *.yaml/*.yml file under the folder is read, document by document; a
// folder holding a kustomization is built with krusty instead (confined to
// the folder, plugins and remote bases off). Karmada kinds are decoded
// strictly against propagit's API types, so an unknown field or a wrong type
// is reported with its file, line and field path, and then validated the way
// Karmada's webhooks do. Load reports every problem it finds at once; when
// there is any, nothing is returned, so nothing half-read is ever rendered.
//
// Load is pure apart from reading the given filesystem: no network, no
// clients, no logging.
package load
