package e2e

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/testenv"
)

// TestSyncDriftCorrected edits a propagated ConfigMap directly on the member
// (as kubectl edit would) and deletes another: both are put back from the
// Work within a few drift intervals and recorded as drift in the status. A
// label another tool adds is not drift and stays.
func TestSyncDriftCorrected(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	m := env.Members[0]
	remote := fileRemote(t)
	co := newCheckout(t, remote)
	ns := randomNamespace("drift")
	configMapFleet(co, ns, m.Name)
	co.write(fleetDir+"/app.yaml", configMapYAML(ns, "settings", "from-git")+"---\n"+configMapYAML(ns, "other", "from-git"))
	rev, _ := co.commitPush("drift fleet")
	opts := controllerOptions()
	opts.Deliver.DriftInterval = time.Second
	startControllerOpts(t, newSetup(t, remote, m), opts)
	reader := newStatusReader(t, remote)
	reader.waitApplied(rev, m.Name)

	ctx, cancel := kubeCtx()
	defer cancel()
	cm, err := getConfigMap(m, ns, "settings")
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["value"] = "edited-by-hand"
	cm.Labels["team.example.com/owner"] = "someone"
	if _, err := m.Client().CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Client().CoreV1().ConfigMaps(ns).Delete(ctx, "other", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	edited := time.Now()
	eventually(t, converge, func() (bool, string) {
		cm, err := getConfigMap(m, ns, "settings")
		if err != nil {
			return false, err.Error()
		}
		other, err := getConfigMap(m, ns, "other")
		if err != nil || other == nil || cm == nil {
			return false, fmt.Sprintf("settings=%v other=%v err=%v", cm != nil, other != nil, err)
		}
		return cm.Data["value"] == "from-git" && other.Data["value"] == "from-git",
			fmt.Sprintf("settings=%q other=%q", cm.Data["value"], other.Data["value"])
	})
	t.Logf("edit on the member → reverted in %s", time.Since(edited).Round(100*time.Millisecond))
	cm, err = getConfigMap(m, ns, "settings")
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels["team.example.com/owner"] != "someone" {
		t.Errorf("a label another tool added was removed: %v", cm.Labels)
	}
	eventually(t, converge, func() (bool, string) {
		st, err := reader.get(m.Name)
		if err != nil {
			return false, err.Error()
		}
		found := map[string]string{}
		for _, d := range st.Drift {
			found[d.Name] = d.Action
		}
		return found["settings"] == "Corrected" && found["other"] == "Recreated", fmt.Sprintf("drift records %v", found)
	})
}
