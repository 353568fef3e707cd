package e2e

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/guard"
	"github.com/propagit/propagit/internal/status"
	"github.com/propagit/propagit/internal/testenv"
)

// configMapOn returns ns/name on m, nil when it does not exist.
func configMapOn(t *testing.T, m *testenv.Member, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := getConfigMap(m, ns, name)
	if err != nil {
		t.Fatalf("%s: failed to read ConfigMap %s/%s: %v", m.Name, ns, name, err)
	}
	return cm
}

// waitValue waits until ConfigMap ns/name on m holds value.
func waitValue(t *testing.T, m *testenv.Member, ns, name, value string) *corev1.ConfigMap {
	t.Helper()
	var cm *corev1.ConfigMap
	eventually(t, converge, func() (bool, string) {
		cm = configMapOn(t, m, ns, name)
		if cm == nil {
			return false, fmt.Sprintf("%s: ConfigMap %s/%s not found", m.Name, ns, name)
		}
		return cm.Data["value"] == value, fmt.Sprintf("%s: %s/%s value %q, want %q", m.Name, ns, name, cm.Data["value"], value)
	})
	return cm
}

// report builds `propagit status`'s report from what the controller
// recorded.
func (s *statusReader) report(t *testing.T) *status.Report {
	t.Helper()
	ws, err := s.works()
	if err != nil {
		t.Fatal(err)
	}
	var inputs []status.Input
	for _, w := range ws {
		st, err := s.get(w.Spec.Cluster)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, status.Input{Work: w, Status: st, Mode: "Push"})
	}
	rep, err := status.Build(inputs, "")
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// overrideYAML is an OverridePolicy for ConfigMap ns/name on cluster that
// replaces path with value.
func overrideYAML(ns, name, cluster, path, value string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata:
  name: tune
  namespace: %s
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
    name: %s
  overrideRules:
  - targetCluster:
      clusterNames: [%s]
    overriders:
      plaintext:
      - path: %s
        operator: replace
        value: %q
`, ns, name, cluster, path, value)
}

// TestSafetyOverrideTypoKeepsWhatRuns commits an override whose path does
// not exist for one member, together with a good change elsewhere. The
// member the override targets keeps the ConfigMap it ran (same
// resourceVersion), every other change applies, `propagit status` names the
// policy and the field, and the fixing commit applies normally.
func TestSafetyOverrideTypoKeepsWhatRuns(t *testing.T) {
	t.Parallel()
	members := sharedMembers(t, 2)
	m1, m2 := members[0], members[1]
	ns := randomNamespace("typo")
	remote := e2etest.HTTPRemote(t)
	reader := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	co.ConfigMapFleet(ns, m1.Name, m2.Name)
	co.Write(fleetDir+"/a.yaml", e2etest.ConfigMapYAML(ns, "a", "v1"))
	co.Write(fleetDir+"/b.yaml", e2etest.ConfigMapYAML(ns, "b", "v1"))
	rev1 := co.CommitPush("two ConfigMaps")
	ctrl := startController(t, newSetup(t, remote, members...))
	reader.waitApplied(rev1, m1.Name, m2.Name)
	before := configMapOn(t, m2, ns, "a")

	co.Write(fleetDir+"/override.yaml", overrideYAML(ns, "a", m2.Name, "/data/valeu", "tuned"))
	co.Write(fleetDir+"/b.yaml", e2etest.ConfigMapYAML(ns, "b", "v2"))
	rev2 := co.CommitPush("tune a on member 2 (typo) and change b")
	ctrl.waitRevision(rev2)
	for _, m := range members {
		waitValue(t, m, ns, "b", "v2")
	}
	eventually(t, converge, func() (bool, string) {
		rep := reader.report(t)
		for _, e := range rep.RenderErrors {
			if e.Cluster == m2.Name && strings.Contains(e.Error, "OverridePolicy.policy.karmada.io/"+ns+"/tune") && strings.Contains(e.Error, "/data/valeu") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no render error naming the policy and path for %s: %+v", m2.Name, rep.RenderErrors)
	})
	if after := configMapOn(t, m2, ns, "a"); after == nil || after.ResourceVersion != before.ResourceVersion {
		t.Fatalf("%s: ConfigMap a changed under a render error (resourceVersion %s → %v)", m2.Name, before.ResourceVersion, after)
	}
	if cm := configMapOn(t, m1, ns, "a"); cm == nil || cm.Data["value"] != "v1" {
		t.Fatalf("%s: ConfigMap a = %v, want it untouched (v1)", m1.Name, cm)
	}

	co.Write(fleetDir+"/override.yaml", overrideYAML(ns, "a", m2.Name, "/data/value", "tuned"))
	rev3 := co.CommitPush("fix the override path")
	ctrl.waitRevision(rev3)
	waitValue(t, m2, ns, "a", "tuned")
	eventually(t, converge, func() (bool, string) {
		rep := reader.report(t)
		return len(rep.RenderErrors) == 0, fmt.Sprintf("render errors after the fix: %+v", rep.RenderErrors)
	})
}

// TestSafetyDeletedPolicyLeavesTemplatesRunning deletes the only
// PropagationPolicy: nothing is deleted on the member and the templates
// show as unclaimed. Deleting the templates then prunes them — except one
// whose policy said preserveResourcesOnDeletion, which stays on the member
// without propagit's labels and annotations (Karmada §10.4).
func TestSafetyDeletedPolicyLeavesTemplatesRunning(t *testing.T) {
	t.Parallel()
	m1 := sharedMembers(t, 1)[0]
	ns := randomNamespace("unclaimed")
	remote := e2etest.HTTPRemote(t)
	reader := newStatusReader(t, remote)
	co := newCheckout(t, remote)
	co.ConfigMapFleet(ns, m1.Name)
	// "kept" is placed by a policy of its own that preserves it on deletion.
	co.Write(fleetDir+"/policy-kept.yaml", strings.Replace(strings.Replace(configMapsPolicyYAML(ns, m1.Name),
		"name: configmaps", "name: kept", 1), "    kind: ConfigMap\n", "    kind: ConfigMap\n    name: kept\n  preserveResourcesOnDeletion: true\n", 1))
	names := []string{"a", "b", "kept"}
	for _, n := range names {
		co.Write(fleetDir+"/cm-"+n+".yaml", e2etest.ConfigMapYAML(ns, n, "v1"))
	}
	rev1 := co.CommitPush("three ConfigMaps")
	ctrl := startController(t, newSetup(t, remote, m1))
	before := waitConfigMaps(t, []*testenv.Member{m1}, ns, names)
	reader.waitApplied(rev1, m1.Name)

	co.Remove(fleetDir + "/policy.yaml")
	rev2 := co.CommitPush("delete the ConfigMaps policy")
	ctrl.waitRevision(rev2)
	eventually(t, converge, func() (bool, string) {
		rep := reader.report(t)
		var got []string
		for _, u := range rep.Unclaimed {
			got = append(got, u.Template)
		}
		joined := strings.Join(got, " ")
		return strings.Contains(joined, "ConfigMap.core/"+ns+"/a") && strings.Contains(joined, "ConfigMap.core/"+ns+"/b"),
			fmt.Sprintf("unclaimed templates %v, want a and b", got)
	})
	ctrl.waitPasses(2)
	checkSameUIDs(t, "after the policy was deleted", before, waitConfigMaps(t, []*testenv.Member{m1}, ns, names), names)

	for _, n := range names {
		co.Remove(fleetDir + "/cm-" + n + ".yaml")
	}
	rev3 := co.CommitPush("delete the templates\n\n" + guard.AllowTrailer + ": true\n")
	ctrl.waitRevision(rev3)
	waitConfigMaps(t, []*testenv.Member{m1}, ns, nil) // no managed ConfigMap left
	kept := configMapOn(t, m1, ns, "kept")
	if kept == nil {
		t.Fatal("the preserved ConfigMap was deleted with its template")
	}
	if kept.UID != before[m1.Name]["kept"] {
		t.Errorf("the preserved ConfigMap was recreated (uid %s, was %s)", kept.UID, before[m1.Name]["kept"])
	}
	for k := range kept.Labels {
		if strings.HasPrefix(k, workv1alpha1.AnnotationPrefix) {
			t.Errorf("the preserved ConfigMap still carries label %s", k)
		}
	}
	for k := range kept.Annotations {
		if strings.HasPrefix(k, workv1alpha1.AnnotationPrefix) {
			t.Errorf("the preserved ConfigMap still carries annotation %s", k)
		}
	}
	for _, n := range []string{"a", "b"} {
		if cm := configMapOn(t, m1, ns, n); cm != nil {
			t.Errorf("ConfigMap %s survived the deletion of its template", n)
		}
	}
}

// TestSafetyTwoInstallationsKeepTheirOwnObjects runs two controllers with
// different names (--owner) from two repositories against one member. The
// second one's repository also wants the first one's ConfigMap: it is
// refused, not adopted. When the first removes its templates, it prunes
// only its own objects; the second one's stay.
func TestSafetyTwoInstallationsKeepTheirOwnObjects(t *testing.T) {
	t.Parallel()
	m1 := sharedMembers(t, 1)[0]
	ns := randomNamespace("owners")

	blueRepo, greenRepo := e2etest.HTTPRemote(t), e2etest.HTTPRemote(t)
	blue, green := newCheckout(t, blueRepo), newCheckout(t, greenRepo)
	blue.ConfigMapFleet(ns, m1.Name)
	blue.Write(fleetDir+"/blue.yaml", e2etest.ConfigMapYAML(ns, "blue", "b"))
	blue.Write(fleetDir+"/shared.yaml", e2etest.ConfigMapYAML(ns, "shared", "from blue"))
	blueRev := blue.CommitPush("blue's ConfigMaps")
	green.Write(fleetDir+"/clusters/"+m1.Name+".yaml", clusterYAML(m1.Name))
	green.Write(fleetDir+"/policy.yaml", configMapsPolicyYAML(ns, m1.Name))
	green.Write(fleetDir+"/green.yaml", e2etest.ConfigMapYAML(ns, "green", "g"))
	green.Write(fleetDir+"/shared.yaml", e2etest.ConfigMapYAML(ns, "shared", "from green"))
	greenRev := green.CommitPush("green's ConfigMaps, one clashing with blue's")

	blueOpts, greenOpts := controllerOptions(), controllerOptions()
	blueOpts.Apply.Owner, greenOpts.Apply.Owner = "blue", "green"
	blueCtrl := startControllerOpts(t, newSetup(t, blueRepo, m1), blueOpts)
	newStatusReader(t, blueRepo).waitApplied(blueRev, m1.Name)
	greenCtrl := startControllerOpts(t, newSetup(t, greenRepo, m1), greenOpts)
	greenCtrl.waitRevision(greenRev)
	waitValue(t, m1, ns, "green", "g")
	greenStatus := newStatusReader(t, greenRepo)
	eventually(t, converge, func() (bool, string) {
		st, err := greenStatus.get(m1.Name)
		if err != nil {
			return false, err.Error()
		}
		for _, o := range st.Objects {
			if o.Name == "shared" && o.Action == workv1alpha1.ActionFailed && strings.Contains(o.Message, `"blue"`) {
				return true, ""
			}
		}
		return false, "green's status does not show the refused take-over of blue's ConfigMap; " + e2etest.DescribeStatus(st)
	})
	shared := configMapOn(t, m1, ns, "shared")
	if shared.Data["value"] != "from blue" || shared.Labels[workv1alpha1.LabelOwner] != "blue" {
		t.Fatalf("blue's ConfigMap was taken over: value %q, owner %q", shared.Data["value"], shared.Labels[workv1alpha1.LabelOwner])
	}

	blue.Remove(fleetDir + "/blue.yaml")
	blue.Remove(fleetDir + "/shared.yaml")
	blueRev2 := blue.CommitPush("blue leaves\n\n" + guard.AllowTrailer + ": true\n")
	blueCtrl.waitRevision(blueRev2)
	eventually(t, converge, func() (bool, string) {
		b, s := configMapOn(t, m1, ns, "blue"), configMapOn(t, m1, ns, "shared")
		return b == nil && (s == nil || s.Labels[workv1alpha1.LabelOwner] != "blue"),
			fmt.Sprintf("blue's ConfigMaps still there: blue %v, shared %v", b != nil, s != nil)
	})
	greenCtrl.waitPasses(2)
	if g := configMapOn(t, m1, ns, "green"); g == nil || g.Labels[workv1alpha1.LabelOwner] != "green" {
		t.Fatalf("green's ConfigMap did not survive blue's prune: %v", g)
	}
}
