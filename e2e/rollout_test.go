package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/promgate"
	"github.com/propagit/propagit/internal/rollout"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/gitstore"
)

const (
	rolloutNS   = "shop"
	rolloutSoak = 3 * time.Second
)

// wavesFleet writes 4 clusters in 3 waves (canary: the first; eu: the
// two labelled region=eu; rest: the last), a Deployment of image and a
// ConfigMap no RolloutPolicy governs, both on every cluster.
func wavesFleet(co *e2etest.Checkout, members []*testenv.Member, image string) {
	var b strings.Builder
	for i, m := range members {
		label := ""
		if i == 1 || i == 2 {
			label = "  labels: {region: eu}\n"
		}
		fmt.Fprintf(&b, "---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: %s\n%sspec:\n  syncMode: Push\n", m.Name, label)
	}
	co.Write(fleetDir+"/clusters.yaml", b.String())
	co.Write(fleetDir+"/app.yaml", fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other, namespace: %[1]s}
data: {team: payments}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: shop, namespace: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  - {apiVersion: v1, kind: ConfigMap}
  placement:
    replicaScheduling: {replicaSchedulingType: Duplicated}
---
apiVersion: propagit.io/v1alpha1
kind: RolloutPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  waves:
  - name: canary
    clusterAffinity: {clusterNames: [%[2]s]}
    soakTime: %[3]s
  - name: eu
    clusterAffinity:
      labelSelector: {matchLabels: {region: eu}}
    soakTime: %[3]s
  progressDeadline: 15s
  onFailure: Rollback
`, rolloutNS, members[0].Name, rolloutSoak))
	co.Write(fleetDir+"/web.yaml", webDeployment(image))
}

func webDeployment(image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: %q}]
`, rolloutNS, image)
}

// deploymentController plays the member's Deployment controller, which
// these members (an apiserver and etcd) do not run: a Deployment whose
// image does not end in ":bad" becomes available; a bad one never does.
func deploymentController(t *testing.T, members []*testenv.Member) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, m := range members {
		wg.Go(func() {
			for ctx.Err() == nil {
				d, err := m.Client().AppsV1().Deployments(rolloutNS).Get(ctx, "web", metav1.GetOptions{})
				if err == nil && d.Status.ObservedGeneration != d.Generation {
					n := *d.Spec.Replicas
					ready := n
					if strings.HasSuffix(d.Spec.Template.Spec.Containers[0].Image, ":bad") {
						ready = 0
					}
					st := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: ready, ReadyReplicas: ready, AvailableReplicas: ready,
						Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionStatus(boolStatus(ready == n))}}}
					if ready == n {
						// kstatus reads a finished rollout from this condition.
						st.Conditions = append(st.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"})
					}
					if ready < n {
						st.UnavailableReplicas = n - ready
					}
					patch, _ := json.Marshal(map[string]any{"status": st})
					_, _ = m.Client().AppsV1().Deployments(rolloutNS).Patch(ctx, "web", types.MergePatchType, patch, metav1.PatchOptions{}, "status")
				}
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
			}
		})
	}
}

func boolStatus(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// rolloutWatch records, from the Works the controller records, when each
// cluster's Work first held each image: the order of the waves is read
// from what was recorded, not from the members.
type rolloutWatch struct {
	t     *testing.T
	store works.Store
	mu    sync.Mutex
	first map[string]map[string]time.Time // image → cluster → first seen
}

func watchWorks(t *testing.T, store works.Store) *rolloutWatch {
	w := &rolloutWatch{t: t, store: store, first: map[string]map[string]time.Time{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			ws, err := store.List(ctx)
			now := time.Now()
			if err == nil {
				w.mu.Lock()
				for _, wk := range ws {
					img := workImage(wk)
					if img == "" {
						continue
					}
					if w.first[img] == nil {
						w.first[img] = map[string]time.Time{}
					}
					if _, ok := w.first[img][wk.Spec.Cluster]; !ok {
						w.first[img][wk.Spec.Cluster] = now
					}
				}
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return w
}

// workImage returns the image of Deployment web in a Work.
func workImage(w *workv1alpha1.Work) string {
	objs, err := workv1alpha1.Objects(w)
	if err != nil {
		return ""
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" && o.GetName() == "web" {
			cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			if len(cs) > 0 {
				img, _, _ := unstructured.NestedString(cs[0].(map[string]any), "image")
				return img
			}
		}
	}
	return ""
}

func (w *rolloutWatch) seen(image, cluster string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	at, ok := w.first[image][cluster]
	return at, ok
}

// rolloutState reads the RolloutPolicy's recorded state from the store.
func rolloutState(t *testing.T, store works.RolloutStates) *rollout.State {
	t.Helper()
	ctx, cancel := kubeCtx()
	defer cancel()
	data, err := store.Rollouts(ctx)
	if err != nil || len(data) == 0 {
		return nil
	}
	var doc rollout.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("rollouts record unreadable: %v", err)
	}
	for _, st := range doc.Rollouts {
		if strings.HasSuffix(st.Policy, "/web") {
			return st
		}
	}
	return nil
}

func waitRollout(t *testing.T, store works.RolloutStates, what string, ok func(*rollout.State) bool) *rollout.State {
	t.Helper()
	var st *rollout.State
	eventually(t, 2*converge, func() (bool, string) {
		st = rolloutState(t, store)
		if st == nil {
			return false, "no rollout recorded"
		}
		return ok(st), fmt.Sprintf("want %s; rollout of %s: phase %s wave %s reason %q given %v", what, e2etest.Short(st.Revision), st.Phase, st.WaveName, st.Reason, givenNames(st))
	})
	return st
}

func givenNames(st *rollout.State) []string {
	var out []string
	for c, g := range st.Given {
		out = append(out, fmt.Sprintf("%s(%s healthy=%v failed=%q)", c, g.Wave, !g.HealthySince.IsZero(), g.Failed))
	}
	return out
}

func memberImage(m *testenv.Member) string {
	ctx, cancel := kubeCtx()
	defer cancel()
	d, err := m.Client().AppsV1().Deployments(rolloutNS).Get(ctx, "web", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "<absent>"
	}
	if err != nil {
		return err.Error()
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

func otherVersions(t *testing.T, members []*testenv.Member) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range members {
		ctx, cancel := kubeCtx()
		cm, err := m.Client().CoreV1().ConfigMaps(rolloutNS).Get(ctx, "other", metav1.GetOptions{})
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		out[m.Name] = cm.ResourceVersion
	}
	return out
}

// TestRolloutWavesOnMembers rolls revisions out to 4 real members in 3
// waves: a good commit reaches the waves strictly in order, each after the
// one before stayed healthy for its soak; a bad one (pods never Ready)
// fails in the canary and is rolled back there, the other waves never
// recording it and no other object touched; a controller killed mid-rollout
// resumes at the same wave; a newer commit supersedes a running rollout.
func TestRolloutWavesOnMembers(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 4})
	ms := env.Members
	deploymentController(t, ms)
	remote := e2etest.HTTPRemote(t)
	store, err := gitstore.New(gitstore.Options{URL: remote.URL, Auth: remote.Auth})
	if err != nil {
		t.Fatal(err)
	}
	watch := watchWorks(t, store)
	co := newCheckout(t, remote)
	wavesFleet(co, ms, "web:v1")
	co.CommitPush("shop v1")
	s := newSetup(t, remote, ms...)
	ctrl := startController(t, s)
	waitRollout(t, store, "v1 complete", func(st *rollout.State) bool { return st.Phase == rollout.Complete })

	// A good commit: canary, then eu once the canary was healthy for the
	// soak, then the rest once eu was.
	co.Write(fleetDir+"/web.yaml", webDeployment("web:v2"))
	rev2 := co.CommitPush("shop v2")
	st := waitRollout(t, store, "v2 complete", func(st *rollout.State) bool { return st.Revision == rev2 && st.Phase == rollout.Complete })
	canary, eu1, eu2, rest := ms[0].Name, ms[1].Name, ms[2].Name, ms[3].Name
	for _, c := range []string{eu1, eu2} {
		if gap := st.Given[c].At.Sub(st.Given[canary].HealthySince); gap < rolloutSoak {
			t.Errorf("%s got v2 %s after the canary turned healthy, before its soak of %s ended", c, gap, rolloutSoak)
		}
	}
	euHealthy := st.Given[eu1].HealthySince
	if st.Given[eu2].HealthySince.After(euHealthy) {
		euHealthy = st.Given[eu2].HealthySince
	}
	if gap := st.Given[rest].At.Sub(euHealthy); gap < rolloutSoak {
		t.Errorf("%s got v2 %s after eu was healthy, before its soak of %s ended", rest, gap, rolloutSoak)
	}
	// The same order in the Works as recorded.
	at := map[string]time.Time{}
	for _, c := range []string{canary, eu1, eu2, rest} {
		seen, ok := watch.seen("web:v2", c)
		if !ok {
			t.Fatalf("the Work of %s never held web:v2", c)
		}
		at[c] = seen
	}
	if !at[canary].Before(at[eu1]) || !at[canary].Before(at[eu2]) || !at[eu1].Before(at[rest]) || !at[eu2].Before(at[rest]) {
		t.Errorf("Works took web:v2 out of wave order: %v", at)
	}
	for _, m := range ms {
		eventually(t, converge, func() (bool, string) { return memberImage(m) == "web:v2", m.Name + " runs " + memberImage(m) })
	}

	// A bad commit: the canary never turns healthy; Rollback puts it back
	// on v2, and the other waves never record the bad image.
	others := otherVersions(t, ms)
	co.Write(fleetDir+"/web.yaml", webDeployment("web:bad"))
	rev3 := co.CommitPush("shop bad")
	st = waitRollout(t, store, "the bad revision rolled back", func(st *rollout.State) bool { return st.Revision == rev3 && st.Phase == rollout.RolledBack })
	if !strings.Contains(st.Reason, canary+": not healthy within the progress deadline") {
		t.Errorf("rollback reason %q does not name the canary and the deadline", st.Reason)
	}
	eventually(t, converge, func() (bool, string) { return memberImage(ms[0]) == "web:v2", "canary runs " + memberImage(ms[0]) })
	if _, ok := watch.seen("web:bad", canary); !ok {
		t.Error("the canary's Work never held the bad image: nothing was rolled out")
	}
	for _, c := range []string{eu1, eu2, rest} {
		if at, ok := watch.seen("web:bad", c); ok {
			t.Errorf("the Work of %s held the bad image at %s", c, at)
		}
	}
	if after := otherVersions(t, ms); fmt.Sprint(after) != fmt.Sprint(others) {
		t.Errorf("the ConfigMap no rollout governs was touched: resourceVersions %v, then %v", others, after)
	}
	// People and pipelines see it: status names the rollback, wait stops
	// at once with its own exit code.
	if r := runCLI(t, converge, "status", "--repo", remote.URL); !strings.Contains(r.stdout, "RolledBack") || !strings.Contains(r.stdout, "ROLLOUT") {
		t.Errorf("status does not show the rolled back rollout:\n%s", r)
	}
	if r := runCLI(t, converge, "wait", "--repo", remote.URL, "--revision", rev3, "--timeout", "2m", "--interval", "200ms"); r.code != 6 || !strings.Contains(r.stderr+r.err.Error(), "rolledback") {
		t.Errorf("wait for the rolled back revision: want exit 6 naming the rollback, got %s", r)
	}
	ws, err := store.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if held := w.Annotations[workv1alpha1.AnnotationRolloutHeld]; !strings.Contains(held, "rolled back") {
			t.Errorf("Work of %s: %s = %q, want why it was rolled back", w.Spec.Cluster, workv1alpha1.AnnotationRolloutHeld, held)
		}
	}

	// A controller killed mid-rollout resumes at the same wave.
	co.Write(fleetDir+"/web.yaml", webDeployment("web:v4"))
	rev4 := co.CommitPush("shop v4")
	st = waitRollout(t, store, "v4 in wave eu", func(st *rollout.State) bool { return st.Revision == rev4 && st.WaveName == "eu" })
	canaryAt := st.Given[canary].At
	ctrl.stop()
	ctrl = startController(t, s)
	st = waitRollout(t, store, "v4 complete after the restart", func(st *rollout.State) bool { return st.Revision == rev4 && st.Phase == rollout.Complete })
	if !st.Given[canary].At.Equal(canaryAt) {
		t.Errorf("the restarted controller gave the canary v4 again at %s (first at %s): it did not resume", st.Given[canary].At, canaryAt)
	}
	if at, ok := watch.seen("web:v4", rest); !ok || at.Before(st.Given[eu1].HealthySince) {
		t.Errorf("%s took v4 at %v, before eu was healthy", rest, at)
	}

	// A newer commit supersedes a running rollout: v6 starts at the
	// canary; v5 never reaches past it.
	co.Write(fleetDir+"/web.yaml", webDeployment("web:v5"))
	rev5 := co.CommitPush("shop v5")
	waitRollout(t, store, "v5 at the canary", func(st *rollout.State) bool { return st.Revision == rev5 && st.Given[canary] != nil })
	co.Write(fleetDir+"/web.yaml", webDeployment("web:v6"))
	rev6 := co.CommitPush("shop v6")
	waitRollout(t, store, "v6 complete", func(st *rollout.State) bool { return st.Revision == rev6 && st.Phase == rollout.Complete })
	for _, c := range []string{eu1, eu2, rest} {
		if at, ok := watch.seen("web:v5", c); ok {
			t.Errorf("the Work of %s held the superseded web:v5 at %s", c, at)
		}
	}
	ctrl.stop()
}

// TestRolloutPrometheusGate gates the canary wave on a Prometheus query
// (the server a test double in this process, given to the controller
// outside Git): while the query returns a sample for the canary, the canary
// never counts as healthy although its Deployment is, the rollout halts at
// the deadline and the next wave never records the revision; once the
// query returns nothing, the next revision completes. The query reaches
// the server with the cluster's name put in.
func TestRolloutPrometheusGate(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 2})
	ms := env.Members
	deploymentController(t, ms)
	var bad atomic.Bool
	var mu sync.Mutex
	var queries []string
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.FormValue("query")
		mu.Lock()
		queries = append(queries, q)
		mu.Unlock()
		result := "[]"
		if bad.Load() && strings.Contains(q, `cluster="`+ms[0].Name+`"`) {
			result = `[{"metric":{"cluster":"` + ms[0].Name + `"},"value":[1,"0.4"]}]`
		}
		_, _ = fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":%s}}`, result)
	}))
	defer prom.Close()

	remote := e2etest.HTTPRemote(t)
	store, err := gitstore.New(gitstore.Options{URL: remote.URL, Auth: remote.Auth})
	if err != nil {
		t.Fatal(err)
	}
	watch := watchWorks(t, store)
	co := newCheckout(t, remote)
	wavesFleet(co, ms, "web:v1")
	canary := "    clusterAffinity: {clusterNames: [" + ms[0].Name + "]}\n    soakTime: " + rolloutSoak.String() + "\n"
	co.Edit(fleetDir+"/app.yaml", canary, canary+"    gate:\n      prometheus:\n        query: 'sum by (cluster) (rate(http_errors_total{cluster=\"{{cluster}}\"}[5m])) > 0.01'\n")
	co.Edit(fleetDir+"/app.yaml", "progressDeadline: 15s\n  onFailure: Rollback", "progressDeadline: 8s\n  onFailure: Halt")
	co.CommitPush("shop v1, gated canary")
	opts := controllerOptions()
	opts.RolloutGate = &promgate.Client{URL: prom.URL}
	startControllerOpts(t, newSetup(t, remote, ms...), opts)
	waitRollout(t, store, "v1 complete", func(st *rollout.State) bool { return st.Phase == rollout.Complete })

	bad.Store(true)
	co.Write(fleetDir+"/web.yaml", webDeployment("web:v2"))
	rev2 := co.CommitPush("shop v2")
	st := waitRollout(t, store, "v2 halted by the gate", func(st *rollout.State) bool { return st.Revision == rev2 && st.Phase == rollout.Halted })
	if !strings.Contains(st.Reason, ms[0].Name+": not healthy within the progress deadline") {
		t.Errorf("halt reason %q does not name the gated canary", st.Reason)
	}
	eventually(t, converge, func() (bool, string) { return memberImage(ms[0]) == "web:v2", "canary runs " + memberImage(ms[0]) })
	if at, ok := watch.seen("web:v2", ms[1].Name); ok {
		t.Errorf("the Work of %s held web:v2 at %s though the canary's gate failed", ms[1].Name, at)
	}
	mu.Lock()
	asked := strings.Join(queries, "\n")
	mu.Unlock()
	if !strings.Contains(asked, `rate(http_errors_total{cluster="`+ms[0].Name+`"}[5m])`) {
		t.Errorf("the gate's query never reached Prometheus with the canary's name:\n%s", asked)
	}

	bad.Store(false)
	co.Write(fleetDir+"/web.yaml", webDeployment("web:v3"))
	rev3 := co.CommitPush("shop v3")
	waitRollout(t, store, "v3 complete", func(st *rollout.State) bool { return st.Revision == rev3 && st.Phase == rollout.Complete })
}
