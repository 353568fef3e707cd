// Package api holds the object types propagit reads from Git. The policy and
// cluster types use Karmada's API groups and field names unchanged, so an
// existing Karmada repository loads as it is. The types are plain data: no
// client, no behaviour beyond small accessors and defaulting.
package api
