package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/status"
	"github.com/propagit/propagit/internal/testenv"
)

// rolloutCRD is a Rollout-like CRD with a status subresource: nothing
// runs it on the members, so its status is what the test writes.
const rolloutCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: rollouts.argoproj.io}
spec:
  group: argoproj.io
  scope: Namespaced
  names: {kind: Rollout, plural: rollouts, singular: rollout, listKind: RolloutList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// rolloutFleet is a Rollout of 6 replicas divided 2:1 by static weights,
// with the customization that gives it replicas and health.
func rolloutFleet(ns, m1, m2 string) map[string]string {
	return map[string]string{
		"ric.yaml": `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: argo-rollout}
spec:
  target: {apiVersion: argoproj.io/v1alpha1, kind: Rollout}
  customizations:
    replicaResource:
      luaScript: |
        local kube = require("kube")
        function GetReplicas(obj)
          return obj.spec.replicas, kube.accuratePodRequirements(obj.spec.template)
        end
    replicaRevision:
      luaScript: |
        function ReviseReplica(obj, desiredReplica)
          obj.spec.replicas = desiredReplica
          return obj
        end
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observedObj)
          local s = observedObj.status
          return s ~= nil and s.phase == "Healthy" and s.availableReplicas == observedObj.spec.replicas
        end
`,
		"rollout.yaml": fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: %s}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx, resources: {requests: {cpu: 10m}}}
`, ns),
		"policy.yaml": fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: web}
  placement:
    clusterAffinity: {clusterNames: [%[2]s, %[3]s]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [%[2]s]}, weight: 2}
        - {targetCluster: {clusterNames: [%[3]s]}, weight: 1}
`, ns, m1, m2),
	}
}

// TestKarmadaInterpreterDividesACRD: a CRD propagit knows nothing of is
// divided 2:1 across two real members through its customization's
// GetReplicas and ReviseReplica, and `propagit status` shows its health as
// the InterpretHealth script judges it, not as kstatus would (kstatus
// calls a custom resource without conditions Current at once).
func TestKarmadaInterpreterDividesACRD(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 2})
	m1, m2 := env.Members[0], env.Members[1]
	crdFile := filepath.Join(t.TempDir(), "crd.yaml")
	if err := os.WriteFile(crdFile, []byte(rolloutCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range env.Members {
		e2etest.InstallCRD(t, m, crdFile, converge, pollEvery)
	}
	ns := randomNamespace("interp")
	remote := e2etest.HTTPRemote(t)
	co := newCheckout(t, remote)
	for _, name := range []string{m1.Name, m2.Name} {
		co.Write(fleetDir+"/clusters/"+name+".yaml", clusterYAML(name))
	}
	co.Write(fleetDir+"/namespace.yaml", e2etest.NamespaceYAML(ns))
	for name, content := range rolloutFleet(ns, m1.Name, m2.Name) {
		co.Write(fleetDir+"/"+name, content)
	}
	rev, pushed := co.CommitPush("a Rollout divided 2:1 by its customization"), time.Now()
	startController(t, newSetup(t, remote, env.Members...))
	statuses := newStatusReader(t, remote)
	statuses.waitApplied(rev, m1.Name, m2.Name)
	t.Logf("timing: both members applied %s %s after the push", e2etest.Short(rev), time.Since(pushed).Round(time.Millisecond))

	want := map[*testenv.Member]int64{m1: 4, m2: 2}
	for m, n := range want {
		if got := rolloutReplicas(t, m, ns); got != n {
			t.Errorf("%s: spec.replicas = %d, want %d (6 divided 2:1)", m.Name, got, n)
		}
	}
	template := "Rollout.argoproj.io/" + ns + "/web"
	// No status yet: InterpretHealth says unhealthy (kstatus would say
	// Current), so nothing is ready.
	for _, m := range env.Members {
		eventually(t, converge, func() (bool, string) {
			st, err := statuses.get(m.Name)
			if err != nil {
				return false, err.Error()
			}
			for _, o := range st.Objects {
				if o.Kind == "Rollout" {
					return o.Health == workv1alpha1.HealthInProgress,
						fmt.Sprintf("%s: Rollout health %s, want InProgress from InterpretHealth", m.Name, o.Health)
				}
			}
			return false, fmt.Sprintf("%s: no Rollout in %s", m.Name, e2etest.DescribeStatus(st))
		})
	}
	row := waitTemplateRow(t, remote.URL, template, func(r status.TemplateRow) bool { return r.DesiredReplicas == 6 })
	if row.ReadyReplicas != 0 {
		t.Errorf("ready replicas %d before any status, want 0: health must come from InterpretHealth, not kstatus", row.ReadyReplicas)
	}
	// The members' copies report Healthy: status follows.
	for m, n := range want {
		setRolloutStatus(t, m, ns, n)
	}
	waitTemplateRow(t, remote.URL, template, func(r status.TemplateRow) bool { return r.ReadyReplicas == 6 })
}

// memberClient is a new client of m (so it discovers newly installed
// kinds) that also knows CRDs.
func memberClient(t *testing.T, m *testenv.Member) client.Client {
	t.Helper()
	return e2etest.NewClient(t, m.Config, apiextensionsv1.AddToScheme)
}

var rolloutGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"}

func rolloutReplicas(t *testing.T, m *testenv.Member, ns string) int64 {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(rolloutGVK)
	if err := memberClient(t, m).Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, u); err != nil {
		t.Fatalf("%s: %v", m.Name, err)
	}
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	return n
}

// setRolloutStatus writes what a Rollout controller on the member would.
func setRolloutStatus(t *testing.T, m *testenv.Member, ns string, available int64) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(rolloutGVK)
	u.SetNamespace(ns)
	u.SetName("web")
	patch := fmt.Sprintf(`{"status":{"phase":"Healthy","availableReplicas":%d}}`, available)
	if err := memberClient(t, m).Status().Patch(t.Context(), u, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("%s: %v", m.Name, err)
	}
}

// waitTemplateRow polls `propagit status -o json` until the template's row
// satisfies ok, and returns it.
func waitTemplateRow(t *testing.T, repo, template string, ok func(status.TemplateRow) bool) status.TemplateRow {
	t.Helper()
	var row status.TemplateRow
	eventually(t, converge, func() (bool, string) {
		r := runCLI(t, converge, "status", "-o", "json", "--repo", repo)
		var rep status.Report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			return false, r.String()
		}
		var names []string
		for _, tr := range rep.Templates {
			if tr.Template == template {
				row = tr
				return ok(tr), fmt.Sprintf("row %+v", tr)
			}
			names = append(names, tr.Template)
		}
		return false, fmt.Sprintf("no row for %s in %s", template, strings.Join(names, ", "))
	})
	return row
}
