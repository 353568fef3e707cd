package e2e

import (
	"github.com/propagit/propagit/e2e/e2etest"
)

// quickstartDir is the example fleet the quickstart scenarios push.
const quickstartDir = "../examples/quickstart/fleet"

// randomNamespace returns a namespace name no other test uses.
func randomNamespace(prefix string) string { return e2etest.RandomName(prefix) }

// clusterYAML is a push-mode Cluster without status: the controller probes
// it.
func clusterYAML(name string) string { return e2etest.ClusterYAML(name, "Push") }

// configMapsPolicyYAML propagates every ConfigMap of ns to clusters.
func configMapsPolicyYAML(ns string, clusters ...string) string {
	return e2etest.Policy{Namespace: ns, Clusters: clusters}.YAML()
}
