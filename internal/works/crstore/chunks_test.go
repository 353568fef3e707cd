package crstore

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// bigWork is cluster's Work of n ConfigMaps of about 1 KiB each.
func bigWork(cluster, rev string, n int, value string) *workv1alpha1.Work {
	var objs []map[string]any
	for i := range n {
		objs = append(objs, configMap("app", fmt.Sprintf("cm-%05d", i), map[string]any{"v": value, "pad": strings.Repeat("x", 1000)}))
	}
	return newTestWork(cluster, rev, objs...)
}

// countParts returns how many Work custom resources hold cluster's Work.
func countParts(t *testing.T, c client.Client, cluster string) int {
	t.Helper()
	ns, err := workv1alpha1.MemberNamespace(cluster)
	if err != nil {
		t.Fatal(err)
	}
	var l workv1alpha1.WorkList
	if err := c.List(ctxT(t), &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}

// TestCRStoreSplitsAWorkTooLargeForOneObject records a member's Work of
// 3,000 objects (about 3 MB, twice what etcd takes in one object) as
// several Work custom resources on a real apiserver, reads it back whole
// through every reader, rewrites nothing when it is unchanged, drops the
// parts it no longer needs, and refuses to mix parts of two writes.
func TestCRStoreSplitsAWorkTooLargeForOneObject(t *testing.T) {
	c := hub(t)
	resetMembers(t, c)
	s := New(c, hubNamespace(t, c))
	big := bigWork("big", "r1", 3000, "a")
	changed, err := s.Put(ctxT(t), "r1", []*workv1alpha1.Work{big})
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != 1 {
		t.Fatalf("changed %v", changed)
	}
	if n := countParts(t, c, "big"); n < 3 {
		t.Fatalf("%d Work objects hold 3 MB of manifests, want at least 3", n)
	}
	want := workv1alpha1.Digest(big)
	whole, err := s.ListCluster(ctxT(t), "big")
	if err != nil || whole == nil {
		t.Fatalf("ListCluster: %v", err)
	}
	if got := workv1alpha1.Digest(whole); got != want || len(whole.Spec.Manifests) != 3000 {
		t.Fatalf("read back %d manifests, digest %s, want 3000 and %s", len(whole.Spec.Manifests), got, want)
	}
	for k := range whole.Annotations {
		if k == workv1alpha1.AnnotationChunks || k == workv1alpha1.AnnotationManifestsDigest {
			t.Errorf("the store's bookkeeping %s leaked into the Work", k)
		}
	}
	all, err := s.List(ctxT(t))
	if err != nil || len(all) != 1 || workv1alpha1.Digest(all[0]) != want {
		t.Fatalf("List: %d Works, err %v", len(all), err)
	}

	before := resourceVersions(t, c)
	if changed, err := s.Put(ctxT(t), "r2", []*workv1alpha1.Work{bigWork("big", "r2", 3000, "a")}); err != nil || len(changed) != 0 {
		t.Fatalf("unchanged Put: changed %v, err %v", changed, err)
	}
	if after := resourceVersions(t, c); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("an unchanged Work was rewritten:\nbefore %v\nafter  %v", before, after)
	}

	small := bigWork("big", "r3", 10, "b")
	if _, err := s.Put(ctxT(t), "r3", []*workv1alpha1.Work{small}); err != nil {
		t.Fatal(err)
	}
	if n := countParts(t, c, "big"); n != 1 {
		t.Errorf("%d Work objects after the Work shrank, want 1", n)
	}
	if got, err := s.ListCluster(ctxT(t), "big"); err != nil || workv1alpha1.Digest(got) != workv1alpha1.Digest(small) {
		t.Fatalf("after shrinking: %v", err)
	}

	// A part of another write (a Put in progress) is never mixed in.
	if _, err := s.Put(ctxT(t), "r4", []*workv1alpha1.Work{bigWork("big", "r4", 3000, "c")}); err != nil {
		t.Fatal(err)
	}
	ns, _ := workv1alpha1.MemberNamespace("big")
	part := &workv1alpha1.Work{}
	if err := c.Get(ctxT(t), client.ObjectKey{Namespace: ns, Name: partName("big", 1)}, part); err != nil {
		t.Fatal(err)
	}
	part.Annotations[workv1alpha1.AnnotationManifestsDigest] = "another-write"
	if err := c.Update(ctxT(t), part); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListCluster(ctxT(t), "big"); err == nil || !strings.Contains(err.Error(), "being rewritten") {
		t.Errorf("parts of two writes read as one Work (err %v)", err)
	}
	if st, err := s.GetStatus(ctxT(t), "big"); err != nil || st == nil {
		t.Errorf("the status, on the first part, is unreadable while parts disagree: %v", err)
	}
}
