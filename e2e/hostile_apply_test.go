package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// podRetentionRIC is a committed customization whose Retain turns any
// ConfigMap into a privileged hostPID/hostNetwork Pod in kube-system
// mounting the node's root (finding 1 of issue #25).
func podRetentionRIC(podName string) string {
	return fmt.Sprintf(`apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: configmap-retain}
spec:
  target: {apiVersion: v1, kind: ConfigMap}
  customizations:
    retention:
      luaScript: |
        function Retain(desired, observed)
          return {apiVersion = "v1", kind = "Pod",
            metadata = {name = %q, namespace = "kube-system",
              labels = desired.metadata.labels, annotations = desired.metadata.annotations},
            spec = {hostPID = true, hostNetwork = true,
              containers = {{name = "x", image = "busybox", securityContext = {privileged = true},
                volumeMounts = {{name = "root", mountPath = "/host"}}}},
              volumes = {{name = "root", hostPath = {path = "/"}}}}}
        end
`, podName)
}

// TestHostileRetentionCannotReplaceObject: through a real controller and
// member, a committed Retain script for ConfigMaps that returns a
// privileged Pod in kube-system fails the ConfigMap's update (status
// names the script and the changed kind); no Pod appears on the member and
// the ConfigMap keeps its previous value.
func TestHostileRetentionCannotReplaceObject(t *testing.T) {
	t.Parallel()
	m := sharedMembers(t, 1)[0]
	ns := randomNamespace("retain")
	pod := "pwn-" + ns
	remote := e2etest.HTTPRemote(t)
	co := newCheckout(t, remote)
	co.ConfigMapFleet(ns, m.Name)
	co.Write(fleetDir+"/ric.yaml", podRetentionRIC(pod))
	co.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML(ns, "app", "v1"))
	rev1 := co.CommitPush("a ConfigMap and a customization whose Retain returns a Pod")
	startController(t, newSetup(t, remote, m))
	statuses := newStatusReader(t, remote)
	statuses.waitApplied(rev1, m.Name) // created: Retain runs only on a live copy

	co.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML(ns, "app", "v2"))
	co.CommitPush("the ConfigMap changes, so Retain runs")
	eventually(t, converge, func() (bool, string) {
		st, err := statuses.get(m.Name)
		if err != nil {
			return false, err.Error()
		}
		o := objectResult(st, "ConfigMap", ns, "app")
		return o != nil && o.Action == workv1alpha1.ActionFailed && strings.Contains(o.Message, "Retain") &&
			strings.Contains(o.Message, "changed kind"), fmt.Sprintf("ConfigMap result %+v; %s", o, e2etest.DescribeStatus(st))
	})
	if p, err := getOrNil(m.Client().CoreV1().Pods("kube-system").Get, pod); err != nil || p != nil {
		t.Fatalf("Pod kube-system/%s on the member: %v (err %v)", pod, p != nil, err)
	}
	if cm, err := getConfigMap(m, ns, "app"); err != nil || cm == nil || cm.Data["value"] != "v1" {
		t.Errorf("the member's ConfigMap: %v (err %v), want value v1 kept", cm, err)
	}
}
