package e2e

import (
	"fmt"
	"testing"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/testenv"
)

// TestKarmadaNamespacePlacedOnOneMember is Karmada's documented way to place
// a Namespace on some clusters only: the skip-auto-propagation label stops
// namespace auto-propagation, and a ClusterPropagationPolicy places the
// Namespace like any cluster-scoped template. Both members apply the
// revision; only member1 gets the Namespace and what lives in it.
func TestKarmadaNamespacePlacedOnOneMember(t *testing.T) {
	t.Parallel()
	members := sharedMembers(t, 2)
	m1, m2 := members[0], members[1]
	remote := e2etest.FileRemote(t)
	co := newCheckout(t, remote)
	ns := randomNamespace("only1")
	co.Write(fleetDir+"/clusters.yaml", clusterYAML(m1.Name)+"---\n"+clusterYAML(m2.Name))
	co.Write(fleetDir+"/ns.yaml", fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s
  labels: {namespace.karmada.io/skip-auto-propagation: "true"}
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Namespace, name: %[1]s}]
  placement:
    clusterAffinity: {clusterNames: [%[2]s]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: settings, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
  placement:
    clusterAffinity: {clusterNames: [%[2]s]}
`, ns, m1.Name)+"---\n"+e2etest.ConfigMapYAML(ns, "settings", "one"))
	co.Write(fleetDir+"/everywhere.yaml", e2etest.ConfigMapYAML("default", ns+"-marker", "both")+`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: marker}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: `+ns+`-marker}]
  placement:
    clusterAffinity: {clusterNames: [`+m1.Name+`, `+m2.Name+`]}
`)
	rev := co.CommitPush("a namespace on member1 only")
	startController(t, newSetup(t, remote, m1, m2))
	newStatusReader(t, remote).waitApplied(rev, m1.Name, m2.Name)

	for _, tc := range []struct {
		m    *testenv.Member
		want bool
	}{{m1, true}, {m2, false}} {
		got, err := getNamespace(tc.m, ns)
		if err != nil {
			t.Fatal(err)
		}
		if (got != nil) != tc.want {
			t.Errorf("%s: namespace %s exists = %v, want %v", tc.m.Name, ns, got != nil, tc.want)
		}
		if marker, err := getConfigMap(tc.m, "default", ns+"-marker"); err != nil || marker == nil {
			t.Errorf("%s: the marker placed on both members is missing (err %v)", tc.m.Name, err)
		}
	}
	if cm, err := getConfigMap(m1, ns, "settings"); err != nil || cm == nil {
		t.Errorf("%s: ConfigMap %s/settings missing (err %v)", m1.Name, ns, err)
	}
}
