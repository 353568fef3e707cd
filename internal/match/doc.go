// Package match decides which policies select a template and which clusters
// an affinity selects, with Karmada's rules: string-equal apiVersion and kind,
// implicit priority (name > labelSelector > kind only), explicit priority,
// namespaced policies over cluster-scoped ones, then name order. It is pure:
// no I/O, no clients.
package match
