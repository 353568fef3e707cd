// Package override applies Karmada's ClusterOverridePolicies and
// OverridePolicies to one template for one member cluster.
//
// The order is Karmada's (pkg/util/overridemanager): every matching
// ClusterOverridePolicy first, then, for a namespaced template, every
// matching OverridePolicy of its namespace. Within each set policies run from
// the least to the most specific selector match, ties broken by name, so the
// most specific policy writes last and wins. Within a policy every rule whose
// targetCluster matches runs in list order, and within a rule the overriders
// run in a fixed order: image, command, args, labels, annotations, field,
// plaintext.
//
// Every edit is a JSON patch applied with evanphx/json-patch v5 default
// options, exactly as Karmada applies it, so a missing path fails the same way
// it fails in Karmada. Apply returns what it applied, for the Work
// annotations, and each edit with its value before and after, for
// `propagit explain`. The package is pure: no I/O, no clients, no logging.
package override
