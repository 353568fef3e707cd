package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Fleet size of the benchmarks: 10,000 templates, each placed on 10 of
// 1,000 members, so each member's Work holds 100 objects with their status
// (100,000 object records in all), and two drift records a member.
const (
	benchMembers   = 1000
	benchTemplates = 10000
	benchSpread    = 10
)

// benchStore fabricates the records of the benchmark fleet.
func benchStore(b *testing.B) *memStore {
	b.Helper()
	store := newMemStore()
	perMember := make([][]*unstructured.Unstructured, benchMembers)
	for i := range benchTemplates {
		d := deployment(fmt.Sprintf("team-%d", i%50), fmt.Sprintf("app-%05d", i), 2)
		for k := range benchSpread {
			m := (i + k*(benchMembers/benchSpread)) % benchMembers
			perMember[m] = append(perMember[m], d)
		}
	}
	now := time.Now()
	for m, objs := range perMember {
		st := readyStatus(rev1, now, objs...)
		for i := range 2 { // two drift corrections a member: 2,000 events
			st.Drift = append(st.Drift, workv1alpha1.DriftRecord{ObjectRef: st.Objects[i].ObjectRef, Fields: []string{".spec.replicas"},
				Manager: "kubectl-edit", Action: workv1alpha1.DriftCorrected, Time: metav1.NewTime(now.Add(-time.Duration(m*2+i) * time.Second))})
		}
		store.put(b, fmt.Sprintf("member-%04d", m), rev1, st, objs...)
	}
	return store
}

// benchServer is a server over the benchmark fleet, refreshed once.
func benchServer(b *testing.B) (*Server, *memStore) {
	b.Helper()
	opts := DefaultOptions()
	store := benchStore(b)
	opts.Works, opts.Status = store, store
	s, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Refresh(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s, store
}

// BenchmarkDashboardRefresh is one refresh, off the request path: when
// nothing changed (the records are read and hashed), and when one member's
// status changed (the whole fleet is folded and indexed again).
func BenchmarkDashboardRefresh(b *testing.B) {
	s, store := benchServer(b)
	b.Run("unchanged", func(b *testing.B) {
		for b.Loop() {
			if err := s.Refresh(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("changed", func(b *testing.B) {
		st, err := store.GetStatus(context.Background(), "member-0000")
		if err != nil {
			b.Fatal(err)
		}
		st = st.DeepCopy()
		for b.Loop() {
			st.Heartbeat.Time = st.Heartbeat.Add(time.Second)
			if err := store.PutStatus(context.Background(), "member-0000", st); err != nil {
				b.Fatal(err)
			}
			if err := s.Refresh(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDashboardFleetPage serves the first page (100 members) of the
// fleet page, then a revalidation that answers 304; it reports the bytes
// of the page.
func BenchmarkDashboardFleetPage(b *testing.B) {
	s, _ := benchServer(b)
	serve := func(path, etag string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	for _, path := range []string{"/", "/?sort=heard&order=desc&page=7", "/templates", "/events"} {
		b.Run("page="+path, func(b *testing.B) {
			var n int
			for b.Loop() {
				rec := serve(path, "")
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
				n = rec.Body.Len()
			}
			b.ReportMetric(float64(n), "bytes/page")
		})
	}
	b.Run("revalidate", func(b *testing.B) {
		etag := serve("/", "").Header().Get("ETag")
		for b.Loop() {
			if rec := serve("/", etag); rec.Code != http.StatusNotModified {
				b.Fatalf("status %d", rec.Code)
			}
		}
	})
}
