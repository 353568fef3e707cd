package dashboard

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/works/workstest"
)

// memStore is the in-memory works store the tests share (workstest.Store),
// with put to record one member at a time.
type memStore struct{ *workstest.Store }

func newMemStore() *memStore { return &memStore{workstest.NewStore()} }

// put records a Work of cluster at rev holding objs, and its status.
func (m *memStore) put(t testing.TB, cluster, rev string, st *workv1alpha1.WorkStatus, objs ...*unstructured.Unstructured) *workv1alpha1.Work {
	t.Helper()
	raw, err := workv1alpha1.EncodeManifests(objs)
	if err != nil {
		t.Fatal(err)
	}
	w := &workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{Cluster: cluster, SourceRevision: rev, Manifests: raw}}
	w.Annotations = map[string]string{}
	m.Record(w)
	if st != nil {
		if err := m.PutStatus(context.Background(), cluster, st); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// readyStatus is the status of a member that applied rev and whose
// objects are all healthy.
func readyStatus(rev string, at time.Time, objs ...*unstructured.Unstructured) *workv1alpha1.WorkStatus {
	st := &workv1alpha1.WorkStatus{AppliedRevision: rev, Heartbeat: &metav1.Time{Time: at}}
	st.Conditions = []metav1.Condition{{Type: workv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonReady,
		LastTransitionTime: metav1.Time{Time: at}}}
	for _, o := range objs {
		st.Objects = append(st.Objects, workv1alpha1.ObjectResult{ObjectRef: workv1alpha1.ObjectRef{ObjectKey: workv1alpha1.KeyOf(o)},
			Action: workv1alpha1.ActionConfigured, Health: workv1alpha1.HealthCurrent})
	}
	return st
}

// object builds a rendered object of template kind/ns/name.
func object(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns}}}
	for k, v := range fields {
		o.Object[k] = v
	}
	o.SetAnnotations(map[string]string{workv1alpha1.AnnotationTemplate: workv1alpha1.KeyOf(o).String()})
	return o
}

func deployment(ns, name string, replicas int64) *unstructured.Unstructured {
	o := object("apps/v1", "Deployment", ns, name, map[string]any{"spec": map[string]any{"replicas": replicas}})
	ann := o.GetAnnotations()
	ann[workv1alpha1.AnnotationScheduledReplicas] = "1"
	o.SetAnnotations(ann)
	return o
}

// newTestServer serves a dashboard over store, refreshed once.
func newTestServer(t testing.TB, store *memStore, mod func(*Options)) (*Server, *httptest.Server) {
	t.Helper()
	opts := DefaultOptions()
	opts.Works, opts.Status = store, store
	opts.PageSize = 2
	if mod != nil {
		mod(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

// get fetches path with the given headers (name, value, ...) and returns
// the response and its body.
func get(t testing.TB, ts *httptest.Server, path string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func mustContain(t testing.TB, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}
