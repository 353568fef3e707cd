// Package workv1alpha1 holds propagit's own API, propagit.io/v1alpha1: the
// Work record, one per member cluster, holding the manifests that cluster
// must run (spec) and what was applied (status). It is stored as a custom
// resource on a hub (CR store) or as files on a Git branch (Git store); both
// stores use these types.
//
// +kubebuilder:object:generate=true
// +groupName=propagit.io
// +versionName=v1alpha1
package workv1alpha1
