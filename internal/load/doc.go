// Package load turns a folder of a Git tree into the inputs of the pipeline:
// templates (ordinary Kubernetes objects), propagation and override policies,
// and member clusters.
//
// Every *.yaml/*.yml file under the folder is read, document by document; a
// folder holding a kustomization is built with krusty instead (confined to
// the folder, builtin plugins only, no remote bases). Hidden files, what the
// root's .propagitignore lists (gitignore syntax), folders of an earlier
// render and files with no Kubernetes object in them (mkdocs.yml,
// docker-compose.yaml; each noted as a Finding) are not. Karmada kinds are
// decoded strictly against propagit's API types, so an unknown field or a
// wrong type is reported with its file, line and field path, and then
// validated the way Karmada's webhooks and CRD schemas do. Load reports every
// problem it finds at once; when there is any, it returns no Set, so nothing
// half-read is ever rendered.
//
// Not everything odd is a problem. Findings (kept in the Set) report Karmada
// kinds propagit does not implement, and a few softer cases that the
// project's YAML corpus (testdata/corpus/EXPECT.md) requires to load:
// unknown metadata fields (dropped), a static weight of 0, documents that are
// evidently not manifests (an object or list where the API wants something
// else, as in pseudo-YAML and "{placeholder}"s; a required field absent from
// an excerpt marked with "..."; an object without a name), which are left
// out of the Set.
//
// Load is pure apart from reading the given filesystem: no network, no
// clients, no logging.
package load
