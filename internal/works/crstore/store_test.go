package crstore

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/workstest"
)

// resourceVersions returns the resourceVersion of every Work in a member
// namespace, by name.
func resourceVersions(t *testing.T, c client.Client) map[string]string {
	t.Helper()
	var l workv1alpha1.WorkList
	if err := c.List(ctxT(t), &l); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, w := range l.Items {
		if strings.HasPrefix(w.Namespace, workv1alpha1.MemberNamespacePrefix) {
			out[w.Name] = w.ResourceVersion
		}
	}
	return out
}

// resetMembers deletes every Work of the member namespaces, which the CR
// tests share: each starts from none.
func resetMembers(t *testing.T, c client.Client) {
	t.Helper()
	var l workv1alpha1.WorkList
	if err := c.List(ctxT(t), &l); err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		if strings.HasPrefix(l.Items[i].Namespace, workv1alpha1.MemberNamespacePrefix) {
			if err := c.Delete(ctxT(t), &l.Items[i]); err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		}
	}
}

// manualWork creates, in cluster's member namespace, an unlabelled Work
// someone made by hand.
func manualWork(t *testing.T, c client.Client, cluster string) {
	t.Helper()
	ns, err := workv1alpha1.MemberNamespace(cluster)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	manual := newTestWork(cluster, "x")
	manual.Namespace = ns
	if err := c.Create(ctxT(t), manual); err != nil {
		t.Fatal(err)
	}
}

func TestCRStorePut(t *testing.T) {
	c := hub(t)
	resetMembers(t, c)
	ctx := ctxT(t)
	s := New(c, hubNamespace(t, c))
	// An unlabelled Work someone made by hand: never touched.
	manualWork(t, c, "manual")

	steps := []struct {
		name        string
		rev         string
		works       []*workv1alpha1.Work
		wantChanged []string
		wantRev     map[string]string
	}{
		{"create", "rev1", fleet(3, 2, "rev1", "a"), []string{"c0", "c1", "c2"}, map[string]string{"c0": "rev1", "c1": "rev1", "c2": "rev1"}},
		{"unchanged", "rev1", fleet(3, 2, "rev1", "a"), nil, map[string]string{"c0": "rev1", "c1": "rev1", "c2": "rev1"}},
		{"revision only", "rev2", fleet(3, 2, "rev2", "a"), nil, map[string]string{"c0": "rev1", "c1": "rev1", "c2": "rev1"}},
		{"one cluster updated", "rev3", append(fleet(3, 2, "rev3", "a")[:1], fleet(3, 2, "rev3", "b")[1:]...), []string{"c1", "c2"},
			map[string]string{"c0": "rev1", "c1": "rev3", "c2": "rev3"}},
		{"cluster removed", "rev4", append(fleet(1, 2, "rev4", "a"), fleet(2, 2, "rev4", "b")[1]), []string{"c2"},
			map[string]string{"c0": "rev1", "c1": "rev3"}},
	}
	for _, st := range steps {
		before := resourceVersions(t, c)
		changed, err := s.Put(ctx, st.rev, st.works)
		wroteOne := false
		for _, w := range st.works {
			wroteOne = wroteOne || contains(st.wantChanged, w.Spec.Cluster)
		}
		if err == nil && wroteOne {
			// The newest revision is this Put's whenever it wrote a Work,
			// although the Works keep older revisions (stale summary fix).
			if newest, nerr := s.NewestRevision(ctx); nerr != nil || newest != st.rev {
				t.Errorf("%s: NewestRevision = %q, %v; want %s", st.name, newest, nerr, st.rev)
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if d := cmp.Diff(st.wantChanged, changed); d != "" {
			t.Errorf("%s: changed (-want +got):\n%s", st.name, d)
		}
		after := resourceVersions(t, c)
		for name, rv := range after {
			if !contains(changed, name) && before[name] != "" && before[name] != rv {
				t.Errorf("%s: Work %s rewritten although unchanged", st.name, name)
			}
		}
		got, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		gotRev := map[string]string{}
		for _, w := range got {
			gotRev[w.Name] = w.Spec.SourceRevision
			if w.Labels[workv1alpha1.LabelCluster] != w.Name {
				t.Errorf("%s: Work %s labels = %v", st.name, w.Name, w.Labels)
			}
			if w.Namespace != workv1alpha1.MemberNamespacePrefix+w.Name {
				t.Errorf("%s: Work %s in namespace %s, not its member's", st.name, w.Name, w.Namespace)
			}
		}
		if d := cmp.Diff(st.wantRev, gotRev); d != "" {
			t.Errorf("%s: stored revisions (-want +got):\n%s", st.name, d)
		}
		if _, ok := after["manual"]; !ok {
			t.Fatalf("%s: the unlabelled Work was deleted", st.name)
		}
	}
}

func TestCRStoreRoundTripAndOwnership(t *testing.T) {
	c := hub(t)
	resetMembers(t, c)
	ctx := ctxT(t)
	s := New(c, hubNamespace(t, c))
	manualWork(t, c, "manual")
	if _, err := s.Put(ctx, "rev3", fleet(2, 2, "rev3", "b")); err != nil {
		t.Fatal(err)
	}
	w, err := s.ListCluster(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	want := fleet(2, 2, "rev3", "b")[1]
	if d := cmp.Diff(decoded(t, want), decoded(t, w)); d != "" {
		t.Errorf("ListCluster (-want +got):\n%s", d)
	}
	if w, err := s.ListCluster(ctx, "nobody"); w != nil || err != nil {
		t.Errorf("ListCluster of an unknown cluster = %v, %v", w, err)
	}

	_, err = s.Put(ctx, "rev5", []*workv1alpha1.Work{newTestWork("manual", "rev5")})
	if err == nil || !strings.Contains(err.Error(), "does not take it over") {
		t.Errorf("Put over an unlabelled Work: error = %v", err)
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func TestCRStoreStatusTransitions(t *testing.T) {
	c := hub(t)
	resetMembers(t, c)
	ctx := ctxT(t)
	s := New(c, hubNamespace(t, c), WithHeartbeatInterval(time.Minute))
	if _, err := s.Put(ctx, "rev1", fleet(1, 1, "rev1", "a")); err != nil {
		t.Fatal(err)
	}
	if st, err := s.GetStatus(ctx, "c0"); err != nil || !cmp.Equal(st, &workv1alpha1.WorkStatus{}) {
		t.Fatalf("initial status = %+v, %v", st, err)
	}
	steps := []struct {
		name   string
		status *workv1alpha1.WorkStatus
		write  bool
	}{
		{"first status", testStatus("rev1", metav1.ConditionTrue, t0), true},
		{"same", testStatus("rev1", metav1.ConditionTrue, t0), false},
		{"heartbeat and transition time only", testStatus("rev1", metav1.ConditionTrue, t0.Add(30*time.Second)), false},
		{"list order only", reversed(testStatus("rev1", metav1.ConditionTrue, t0)), false},
		{"heartbeat interval passed", testStatus("rev1", metav1.ConditionTrue, t0.Add(61*time.Second)), true},
		{"ready flips", testStatus("rev1", metav1.ConditionFalse, t0.Add(62*time.Second)), true},
	}
	for _, st := range steps {
		before := resourceVersions(t, c)["c0"]
		if err := s.PutStatus(ctx, "c0", st.status); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if wrote := resourceVersions(t, c)["c0"] != before; wrote != st.write {
			t.Errorf("%s: wrote = %v, want %v", st.name, wrote, st.write)
		}
	}
	got, err := s.GetStatus(ctx, "c0")
	if err != nil {
		t.Fatal(err)
	}
	want := works.Normalize(steps[5].status)
	want.Conditions[0].LastTransitionTime = metav1.Time{Time: t0} // Applied never changed
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GetStatus (-want +got):\n%s", d)
	}
	// The spec is untouched by status writes, and Put leaves status alone.
	if _, err := s.Put(ctx, "rev2", fleet(1, 1, "rev2", "b")); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetStatus(ctx, "c0"); got.AppliedRevision != "rev1" || len(got.Conditions) != 2 {
		t.Errorf("status after a spec update = %+v", got)
	}
	if st, err := s.GetStatus(ctx, "nobody"); err != nil || !cmp.Equal(st, &workv1alpha1.WorkStatus{}) {
		t.Errorf("status of an unknown cluster = %+v, %v", st, err)
	}
	if err := s.PutStatus(ctx, "nobody", steps[0].status); !apierrors.IsNotFound(err) {
		t.Errorf("PutStatus without a Work: error = %v, want not found", err)
	}
}

// TestCRStoreRecordsAnnotations also pins that annotations other tools set
// on a Work custom resource are kept and never reported back.
func TestCRStoreRecordsAnnotations(t *testing.T) {
	c := hub(t)
	resetMembers(t, c)
	s := New(c, hubNamespace(t, c))
	ctx := ctxT(t)
	ns := workv1alpha1.MemberNamespacePrefix + "c0"
	workstest.CheckAnnotationSteps(t, s)
	w := &workv1alpha1.Work{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c0"}, w); err != nil {
		t.Fatal(err)
	}
	w.Annotations["example.com/owner"] = "team-a"
	if err := c.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	if changed, err := s.Put(ctx, "rev4", workstest.Annotated("rev4", "False")); err != nil || !slices.Equal(changed, []string{"c0"}) {
		t.Fatalf("Put = %v, %v; want c0 changed", changed, err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c0"}, w); err != nil {
		t.Fatal(err)
	}
	// The store's own bookkeeping (which Put wrote last) is recorded too.
	if w.Annotations[workv1alpha1.AnnotationRecordedSequence] == "" {
		t.Errorf("no %s annotation on the written Work", workv1alpha1.AnnotationRecordedSequence)
	}
	delete(w.Annotations, workv1alpha1.AnnotationRecordedSequence)
	want := map[string]string{"example.com/owner": "team-a", workv1alpha1.AnnotationClusterReady: "False"}
	if diff := cmp.Diff(want, w.Annotations); diff != "" {
		t.Errorf("stored annotations (-want +got):\n%s", diff)
	}
	ws, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{workv1alpha1.AnnotationClusterReady: "False"}, ws[0].Annotations); diff != "" {
		t.Errorf("listed annotations, propagit's only (-want +got):\n%s", diff)
	}
}

// The rollouts' record lives in a ConfigMap of the controller's
// namespace; a store without that namespace keeps none.
func TestRolloutStatesCRStore(t *testing.T) {
	c := hub(t)
	workstest.CheckRolloutStates(t, New(c, hubNamespace(t, c)))
	if err := New(c, "").PutRollouts(ctxT(t), []byte("{}")); err == nil {
		t.Error("a store without the controller's namespace wrote the rollouts")
	}
}

func TestCRStoreRecorderHeartbeat(t *testing.T) {
	c := hub(t)
	workstest.CheckRecorderHeartbeat(t, New(c, hubNamespace(t, c)))
	if err := New(c, "").PutRecorderHeartbeat(ctxT(t), works.RecorderState{At: time.Now()}); err == nil {
		t.Error("a store without the controller's namespace wrote a heartbeat")
	}
}
