package soak

import (
	"fmt"
	"strings"
)

const (
	branch   = "main"
	fleetDir = "fleet"
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

// clusterYAML is a Cluster in mode Push or Pull.
func clusterYAML(name, mode string) string {
	return fmt.Sprintf("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: %s\nspec:\n  syncMode: %s\n", name, mode)
}

func namespaceYAML(ns string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns)
}

// policyYAML sends every ConfigMap of ns whole to every cluster;
// scheduling is the replicaSchedulingType, which a bad commit breaks.
func policyYAML(ns, scheduling string, clusters []string) string {
	var names strings.Builder
	for _, c := range clusters {
		fmt.Fprintf(&names, "      - %s\n", c)
	}
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: configmaps
  namespace: %s
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
  placement:
    clusterAffinity:
      clusterNames:
%s    replicaScheduling:
      replicaSchedulingType: %s
`, ns, names.String(), scheduling)
}

// configMapYAML is template t with data.value set to value.
func configMapYAML(t tmpl, value string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: %s
  labels:
    %s: "true"
data:
  value: %q
`, t.name, t.ns, templateLabel, value)
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
