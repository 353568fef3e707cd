package e2e

import (
	"fmt"

	"github.com/propagit/propagit/e2e/e2etest"
)

// quickstartDir is the example fleet the quickstart scenarios push.
const quickstartDir = "../examples/quickstart/fleet"

// randomNamespace returns a namespace name no other test uses.
func randomNamespace(prefix string) string { return e2etest.RandomName(prefix) }

// clusterYAML is a push-mode Cluster without status: the controller probes
// it.
func clusterYAML(name string) string { return e2etest.ClusterYAML(name, "Push") }

// configMapYAML is a ConfigMap with one data key.
func configMapYAML(ns, name, value string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: %s
data:
  value: %q
`, name, ns, value)
}

// configMapsPolicyYAML propagates every ConfigMap of ns to clusters.
func configMapsPolicyYAML(ns string, clusters ...string) string {
	return e2etest.Policy{Namespace: ns, Clusters: clusters}.YAML()
}

// configMapFleet writes a fleet that sends every ConfigMap of ns to the
// clusters: the Cluster objects, the Namespace and the policy.
func configMapFleet(c *checkout, ns string, clusters ...string) {
	for _, name := range clusters {
		c.write(fleetDir+"/clusters/"+name+".yaml", clusterYAML(name))
	}
	c.write(fleetDir+"/namespace.yaml", e2etest.NamespaceYAML(ns))
	c.write(fleetDir+"/policy.yaml", configMapsPolicyYAML(ns, clusters...))
}
