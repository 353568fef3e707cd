package pull

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// managedConfigMap is a ConfigMap as the renderer writes it: with
// propagit's managed label, so prune may delete it.
func managedConfigMap(ns, name, value string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"propagit.io/managed": "true"}},
		"data":     map[string]any{"value": value},
	}
}

// handWork is a Work written by hand, as a newer controller would write it.
func handWork(t testing.TB, cluster, rev string, format int, objs ...map[string]any) *workv1alpha1.Work {
	t.Helper()
	w := &workv1alpha1.Work{
		TypeMeta:   metav1.TypeMeta{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "Work"},
		ObjectMeta: metav1.ObjectMeta{Name: cluster},
		Spec: workv1alpha1.WorkSpec{Cluster: cluster, FormatVersion: format, SourceRevision: rev,
			SyncMode: clusterv1alpha1.SyncModePull},
	}
	for _, o := range objs {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		w.Spec.Manifests = append(w.Spec.Manifests, runtime.RawExtension{Raw: raw})
	}
	return w
}

// putWork records w on the work branch, as the controller would.
func putWork(t testing.TB, store works.Store, w *workv1alpha1.Work) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := store.Put(ctx, w.Spec.SourceRevision, []*workv1alpha1.Work{w}); err != nil {
		t.Fatalf("failed to record the Work of %s: %v", w.Spec.Cluster, err)
	}
}

// TestPullNewerFormatRefused: a Work of a format newer than the agent
// understands (a controller upgraded before its agents, or an agent rolled
// back) is refused as a whole: nothing of it is applied, nothing the agent
// applied before is changed or pruned, and the status says "agent too old
// for Work format N" — once, not on every poll. A Work of a known format
// afterwards is applied as usual.
func TestPullNewerFormatRefused(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	m := env.Members[0]
	r := e2etest.HTTPRemote(t)
	ns := randomName("format")
	nsObj := map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": ns, "labels": map[string]any{"propagit.io/managed": "true"}}}
	controllerStore := newGitStore(t, gitstore.Options{URL: r.URL})
	putWork(t, controllerStore, handWork(t, m.Name, "rev-1", workv1alpha1.FormatVersion,
		nsObj, managedConfigMap(ns, "kept", "v1"), managedConfigMap(ns, "dropped-later", "v1")))

	var member requestCounter
	store := newGitStore(t, gitstore.Options{URL: r.URL})
	src := &countingSource{Source: store}
	a := newAgent(t, agentOptions(m.Name), src, store, member.wrap(m.Config))
	startLoop(t, "agent", a.Run)
	reader := newGitStore(t, gitstore.Options{URL: r.URL})
	waitStatus(t, reader, m.Name, "rev-1 applied and Ready", appliedReady("rev-1"))
	before := snapshotConfigMaps(t, m, ns)

	// The newer format would change one object, prune one and create one.
	newer := workv1alpha1.FormatVersion + 1
	member.reset()
	pushes := r.Server.Pushes()
	putWork(t, controllerStore, handWork(t, m.Name, "rev-2", newer,
		nsObj, managedConfigMap(ns, "kept", "v2"), managedConfigMap(ns, "created-later", "v2")))
	want := fmt.Sprintf("agent too old for Work format %d", newer)
	st := waitStatus(t, reader, m.Name, fmt.Sprintf("message %q", want), func(st *workv1alpha1.WorkStatus) bool {
		return strings.Contains(st.Message, want)
	})
	// More polls of the same Work change nothing either.
	src.waitPolls(t, 5)
	ready := e2etest.Condition(st, workv1alpha1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != "FormatTooNew" || !strings.Contains(ready.Message, want) {
		t.Errorf("Ready condition %+v, want False/FormatTooNew saying %q", ready, want)
	}
	if st.AppliedRevision != "rev-1" {
		t.Errorf("applied revision %q after the refusal, want rev-1 kept", st.AppliedRevision)
	}
	reads, dry, writes := member.counts()
	t.Logf("refused Work: member reads=%d dry-runs=%d writes=%v; status pushes=%d; status: %s",
		reads, dry, writes, r.Server.Pushes()-pushes-1, e2etest.DescribeStatus(st))
	if len(writes) > 0 || dry > 0 {
		t.Errorf("the refused Work reached the member: %d writes %v, %d dry runs; want none", len(writes), writes, dry)
	}
	if after := snapshotConfigMaps(t, m, ns); !maps.Equal(before, after) {
		t.Errorf("objects changed by a refused Work:\nbefore %v\nafter  %v", before, after)
	}
	if ok, msg := absent(m, ns, "created-later")(); !ok {
		t.Error(msg)
	}
	// One Work put and one status transition; the polls after it wrote
	// nothing.
	if got := r.Server.Pushes() - pushes; got != 2 {
		t.Errorf("%d pushes for one Work and its refusal, want 2 (the Work, one status)", got)
	}

	// The same content in the format the agent knows is applied: change,
	// create, prune.
	putWork(t, controllerStore, handWork(t, m.Name, "rev-3", workv1alpha1.FormatVersion,
		nsObj, managedConfigMap(ns, "kept", "v2"), managedConfigMap(ns, "created-later", "v2")))
	eventually(t, converge, all(
		configMapValue(m, ns, "kept", "v2"),
		configMapValue(m, ns, "created-later", "v2"),
		absent(m, ns, "dropped-later"),
	))
	st = waitStatus(t, reader, m.Name, "rev-3 applied and Ready", appliedReady("rev-3"))
	if st.Message != "" {
		t.Errorf("message %q after a known format was applied, want none", st.Message)
	}
}
