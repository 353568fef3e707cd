package deliver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
)

// fakeMember is the smallest apiserver the drift watch talks to: discovery
// for the core group, and a metadata LIST and WATCH of ConfigMaps. It
// records whether a watch is open, so a test can tell which member (which
// credentials) the drift watch is connected to.
type fakeMember struct {
	*httptest.Server
	mu      sync.Mutex
	lists   int
	watches int // open watches
}

func newFakeMember(t *testing.T) *fakeMember {
	t.Helper()
	f := &fakeMember{}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.CloseClientConnections()
		f.Close()
	})
	return f
}

func (f *fakeMember) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/api":
		fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}`)
	case r.URL.Path == "/apis":
		fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
	case r.URL.Path == "/api/v1":
		fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[`+
			`{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get","list","watch","patch","delete"]}]}`)
	case strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/ns/configmaps") && r.URL.Query().Get("watch") == "true":
		f.mu.Lock()
		f.watches++
		f.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		f.mu.Lock()
		f.watches--
		f.mu.Unlock()
	case strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/ns/configmaps"):
		f.mu.Lock()
		f.lists++
		f.mu.Unlock()
		fmt.Fprint(w, `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"1"},"items":[]}`)
	default:
		http.NotFound(w, r)
	}
}

// watching reports whether the member has a drift watch open.
func (f *fakeMember) watching() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.watches > 0
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// When the member's credentials change the driver hands the Syncer a new
// applier; the drift watch must follow it (new credentials, new REST
// mapper) and let go of the old one. It used to be built once, from the
// first applier, for good.
func TestDriftWatchFollowsANewApplier(t *testing.T) {
	before, after := newFakeMember(t), newFakeMember(t)
	mgr := func(f *fakeMember) *apply.Manager {
		m, err := apply.NewForConfig(&rest.Config{Host: f.URL}, apply.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	inv := []workv1alpha1.ObjectRef{ref("a")}
	s := New("member1", DefaultOptions(), nil, nil, logr.Discard())
	defer s.Close()

	s.watchInventory(mgr(before), inv)
	waitFor(t, "the watch is open on the first member", before.watching)

	s.watchInventory(mgr(after), inv)
	waitFor(t, "the watch is open with the new credentials", after.watching)
	waitFor(t, "the watch with the old credentials is closed", func() bool { return !before.watching() })
}
