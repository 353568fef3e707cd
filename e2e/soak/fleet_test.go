package soak

import (
	"fmt"

	"github.com/propagit/propagit/e2e/e2etest"
)

const (
	branch   = e2etest.Branch
	fleetDir = e2etest.FleetDir
	// templateCount ConfigMaps are spread over the namespaces.
	templateCount = 20
	// templateLabel marks every template, so one list per member finds them.
	templateLabel = "soak.propagit.io/template"
)

// namespaces hold the templates, one PropagationPolicy each.
var namespaces = []string{"soak-a", "soak-b", "soak-c"}

// tmpl is one template: ConfigMap ns/name.
type tmpl struct{ ns, name string }

func (t tmpl) key() string  { return t.ns + "/" + t.name }
func (t tmpl) path() string { return fleetDir + "/" + t.ns + "/" + t.name + ".yaml" }

// templates returns the templates in a fixed order.
func templates() []tmpl {
	out := make([]tmpl, templateCount)
	for i := range out {
		out[i] = tmpl{ns: namespaces[i%len(namespaces)], name: fmt.Sprintf("tmpl-%02d", i)}
	}
	return out
}

// policyYAML sends every ConfigMap of ns whole to every cluster;
// scheduling is the replicaSchedulingType, which a bad commit breaks.
func policyYAML(ns, scheduling string, clusters []string) string {
	return e2etest.Policy{Namespace: ns, Clusters: clusters, Scheduling: scheduling}.YAML()
}

// configMapYAML is template t with data.value set to value.
func configMapYAML(t tmpl, value string) string {
	return e2etest.ConfigMapYAML(t.ns, t.name, value, templateLabel, `"true"`)
}

// brokenYAML is not YAML: metadata.namespace is indented under name.
const brokenYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: broken
   namespace: soak-a
data:
  value: broken
`
