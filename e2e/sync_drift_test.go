package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
)

// TestSyncDriftCorrected edits a propagated ConfigMap directly on the member
// (as kubectl edit would) and deletes another: both are put back from the
// Work within a few drift intervals and recorded as drift in the status. A
// label another tool adds is not drift and stays.
func TestSyncDriftCorrected(t *testing.T) {
	t.Parallel()
	m := sharedMembers(t, 1)[0]
	remote := e2etest.FileRemote(t)
	co := newCheckout(t, remote)
	ns := randomNamespace("drift")
	co.ConfigMapFleet(ns, m.Name)
	co.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML(ns, "settings", "from-git")+"---\n"+e2etest.ConfigMapYAML(ns, "other", "from-git"))
	rev := co.CommitPush("drift fleet")
	opts := controllerOptions()
	opts.Deliver.DriftInterval = time.Second
	startControllerOpts(t, newSetup(t, remote, m), opts)
	reader := newStatusReader(t, remote)
	reader.waitApplied(rev, m.Name)

	ctx, cancel := kubeCtx()
	defer cancel()
	// The controller may apply between the read and the write: retry a
	// stale resourceVersion as kubectl edit does.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := getConfigMap(m, ns, "settings")
		if err != nil || cm == nil {
			return fmt.Errorf("ConfigMap settings: %v (found %v)", err, cm != nil)
		}
		cm.Data["value"] = "edited-by-hand"
		cm.Labels["team.example.com/owner"] = "someone"
		_, err = m.Client().CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	})
	if err != nil {
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
	cm, err := getConfigMap(m, ns, "settings")
	if err != nil || cm == nil {
		t.Fatalf("ConfigMap settings: %v (found %v)", err, cm != nil)
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
			found[d.Name] = string(d.Action)
		}
		return found["settings"] == "Corrected" && found["other"] == "Recreated", fmt.Sprintf("drift records %v", found)
	})
}

// driftFleet is Deployment ns/web (drift corrected) and ns/api (drift mode
// warn, set on the template), both propagated to cluster.
func driftFleet(c *e2etest.Checkout, ns, cluster string) {
	c.Write(fleetDir+"/clusters/"+cluster+".yaml", clusterYAML(cluster))
	c.Write(fleetDir+"/app/namespace.yaml", e2etest.NamespaceYAML(ns))
	api := strings.Replace(strings.ReplaceAll(webDeploymentYAML(ns, 1), "web", "api"),
		"metadata: {name: api, namespace: "+ns+"}", "metadata: {name: api, namespace: "+ns+", annotations: {propagit.io/drift: warn}}", 1)
	c.Write(fleetDir+"/app/deployments.yaml", webDeploymentYAML(ns, 2)+api)
	c.Write(fleetDir+"/app/policy.yaml", fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: apps, namespace: %s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  placement:
    clusterAffinity: {clusterNames: [%s]}
`, ns, cluster))
}

// setImage changes the image of Deployment ns/name on m as `kubectl edit`
// does: an Update by another field manager.
func setImage(t *testing.T, m *testenv.Member, ns, name, image string) {
	t.Helper()
	ctx, cancel := kubeCtx()
	defer cancel()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { // as kubectl edit retries
		d, err := m.Client().AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Template.Spec.Containers[0].Image = image
		_, err = m.Client().AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func deploymentSpec(t *testing.T, m *testenv.Member, ns, name string) (image string, replicas int32) {
	t.Helper()
	ctx, cancel := kubeCtx()
	defer cancel()
	d, err := m.Client().AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d.Spec.Template.Spec.Containers[0].Image, *d.Spec.Replicas
}

// lastDrift returns the newest drift record of object name, or nil.
func lastDrift(st *workv1alpha1.WorkStatus, name string) *workv1alpha1.DriftRecord {
	for i := len(st.Drift) - 1; i >= 0; i-- {
		if st.Drift[i].Name == name {
			return &st.Drift[i]
		}
	}
	return nil
}

func driftCount(st *workv1alpha1.WorkStatus, name string) int {
	n := 0
	for _, d := range st.Drift {
		if d.Name == name {
			n++
		}
	}
	return n
}

// TestSyncDriftWatch edits a propagated Deployment's image on the member as
// kubectl edit would. The periodic check is set to 10 minutes, so what puts
// it back within a minute is the watch (the bound is generous for a loaded
// machine; the log gives the measured p50). The status records the field and the
// field manager. With the warn mode the edit is reported and stays. A
// change of replicas through the scale subresource (what an HPA does) is
// neither reverted nor drift.
func TestSyncDriftWatch(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 1, Workloads: true})
	m := env.Members[0]
	remote := e2etest.FileRemote(t)
	co := newCheckout(t, remote)
	ns := randomNamespace("watch")
	driftFleet(co, ns, m.Name)
	rev := co.CommitPush("drift fleet")
	opts := controllerOptions()
	opts.Deliver.DriftInterval = 10 * time.Minute
	startControllerOpts(t, newSetup(t, remote, m), opts)
	reader := newStatusReader(t, remote)
	reader.waitApplied(rev, m.Name)

	const field = "spec.template.spec.containers[name=web].image"
	var reverts []time.Duration
	for i := range 5 {
		image := fmt.Sprintf("nginx:edited-%d", i)
		setImage(t, m, ns, "web", image)
		took := eventuallyEvery(t, time.Minute, 20*time.Millisecond, func() (bool, string) {
			got, _ := deploymentSpec(t, m, ns, "web")
			return got == "nginx:1.27", "image " + got
		})
		reverts = append(reverts, took)
		eventually(t, converge, func() (bool, string) {
			st, err := reader.get(m.Name)
			if err != nil {
				return false, err.Error()
			}
			d := lastDrift(st, "web")
			if n := driftCount(st, "web"); n != i+1 || d == nil {
				return false, fmt.Sprintf("%d drift records for web, want %d", n, i+1)
			}
			ok := d.Action == "Corrected" && slices.Contains(d.Fields, field) && d.Manager == "kubectl-edit"
			return ok, fmt.Sprintf("drift record %+v", *d)
		})
	}
	slices.Sort(reverts)
	t.Logf("edit on the member → reverted (watch): p50 %s, max %s over %d edits", reverts[len(reverts)/2], reverts[len(reverts)-1], len(reverts))

	// warn: reported, not reverted.
	setImage(t, m, ns, "api", "nginx:by-hand")
	eventually(t, converge, func() (bool, string) {
		st, err := reader.get(m.Name)
		if err != nil {
			return false, err.Error()
		}
		d := lastDrift(st, "api")
		if d == nil {
			return false, "no drift record for api"
		}
		return d.Action == "Reported" && slices.Contains(d.Fields, "spec.template.spec.containers[name=api].image") && d.Manager == "kubectl-edit",
			fmt.Sprintf("drift record %+v", *d)
	})
	if got, _ := deploymentSpec(t, m, ns, "api"); got != "nginx:by-hand" {
		t.Errorf("api image = %q: the warn mode must leave the edit in place", got)
	}

	// An HPA scales web through the scale subresource; then an image edit
	// makes propagit check web again: the image is put back, replicas stay.
	ctx, cancel := kubeCtx()
	defer cancel()
	// The deployment controller writes the status meanwhile, so the scale's
	// resourceVersion can be stale by the update: retry as the HPA does.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale, err := m.Client().AppsV1().Deployments(ns).GetScale(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		scale.Spec.Replicas = 3
		_, err = m.Client().AppsV1().Deployments(ns).UpdateScale(ctx, "web", scale, metav1.UpdateOptions{FieldManager: "horizontal-pod-autoscaler"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	before, err := reader.get(m.Name)
	if err != nil {
		t.Fatal(err)
	}
	setImage(t, m, ns, "web", "nginx:after-scale")
	eventually(t, converge, func() (bool, string) {
		st, err := reader.get(m.Name)
		if err != nil {
			return false, err.Error()
		}
		d := lastDrift(st, "web")
		return driftCount(st, "web") > driftCount(before, "web") && slices.Equal(d.Fields, []string{field}),
			fmt.Sprintf("newest web drift %+v", d)
	})
	image, replicas := deploymentSpec(t, m, ns, "web")
	if image != "nginx:1.27" || replicas != 3 {
		t.Fatalf("web: image %s replicas %d; want the image put back and the HPA's 3 replicas kept", image, replicas)
	}
	st, err := reader.get(m.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range st.Drift {
		if slices.ContainsFunc(d.Fields, func(f string) bool { return strings.Contains(f, "replicas") }) {
			t.Errorf("replicas changed by the scale subresource were recorded as drift: %+v", d)
		}
	}
}
