package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/verify/verifytest"
	"github.com/propagit/propagit/internal/works"
	"github.com/propagit/propagit/internal/works/workstest"
)

// switchingSource returns err on every read, whatever it is set to.
type switchingSource struct {
	mu  sync.Mutex
	err error
}

func (s *switchingSource) set(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

func (s *switchingSource) ListCluster(context.Context, string) (*workv1alpha1.Work, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return nil, s.err
}

// storeCommit stores a commit of the empty tree, signed by signer (nil:
// unsigned), in s, as a forger's push would bring it.
func storeCommit(t *testing.T, s *memory.Storage, msg string, signer *verify.Signer) plumbing.Hash {
	t.Helper()
	who := object.Signature{Name: "someone", Email: "someone@example.com", When: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	c := &object.Commit{Author: who, Committer: who, Message: msg,
		TreeHash: plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")}
	if signer != nil {
		payload := &plumbing.MemoryObject{}
		if err := c.EncodeWithoutSignature(payload); err != nil {
			t.Fatal(err)
		}
		r, err := payload.Reader()
		if err != nil {
			t.Fatal(err)
		}
		sig, err := signer.Sign(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		c.PGPSignature = string(sig)
	}
	o := s.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		t.Fatal(err)
	}
	h, err := s.SetEncodedObject(o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// refusedTotal returns propagit_works_refused_total{reason} in reg.
func refusedTotal(t *testing.T, reg *prometheus.Registry, reason string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "propagit_works_refused_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestSupplyChainAgentRefusesForgedWork: a Work whose commit is not signed
// by the controller's key (what the git store's verifier reports as a
// *works.RefusedError) is refused by the agent: it makes no request to its
// member, keeps the applied revision in its status and says why in the
// status message, logs the refusal once however often it polls, and counts
// it once in propagit_works_refused_total by reason. A second forgery,
// signed by a key the agent does not trust, is a new refusal with its own
// reason. The refusals come from the real verifier: a commit the
// controller's key signed passes it.
func TestSupplyChainAgentRefusesForgedWork(t *testing.T) {
	controllerKey := verifytest.SSHKey(t, "propagit-controller")
	mallory := verifytest.SSHKey(t, "mallory@example.com")
	verifier := &verify.TipVerifier{Keys: verifytest.TrustedKeys(t, controllerKey), Limits: verify.DefaultLimits()}
	objects := memory.NewStorage()
	const where = "https://git.example.com/works.git"
	refusal := func(h plumbing.Hash) *works.RefusedError {
		t.Helper()
		err := verifier.VerifyTip(objects, h)
		if err == nil {
			t.Fatalf("commit %s verified", h)
		}
		return &works.RefusedError{Commit: h.String(), Where: where, Err: err}
	}
	if genuine := storeCommit(t, objects, "propagit: render", controllerKey.Signer); verifier.VerifyTip(objects, genuine) != nil {
		t.Fatalf("a commit signed by the controller's key does not verify: %v", verifier.VerifyTip(objects, genuine))
	}
	unsigned := storeCommit(t, objects, "forged, unsigned", nil)
	byMallory := storeCommit(t, objects, "forged, signed by mallory", mallory.Signer)

	var memberRequests atomic.Int64
	member := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		memberRequests.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer member.Close()
	var logMu sync.Mutex
	var logged []string
	log := funcr.New(func(prefix, args string) {
		logMu.Lock()
		defer logMu.Unlock()
		logged = append(logged, prefix+" "+args)
	}, funcr.Options{})
	refusalLines := func(text string) int {
		logMu.Lock()
		defer logMu.Unlock()
		n := 0
		for _, l := range logged {
			if strings.Contains(l, "Work refused") && strings.Contains(l, text) {
				n++
			}
		}
		return n
	}

	const applied = "0123456789abcdef0123456789abcdef01234567"
	status := workstest.NewStore()
	ctx := context.Background()
	if err := status.PutStatus(ctx, "edge-1", workstest.Status(applied, metav1.ConditionTrue, time.Now())); err != nil {
		t.Fatal(err)
	}
	rec := metrics.NewRecorder()
	reg := prometheus.NewRegistry()
	rec.MustRegister(reg)
	opts := DefaultOptions()
	opts.Cluster, opts.ProbeInterval = "edge-1", time.Hour
	opts.Deliver.Metrics = rec
	src := &switchingSource{}
	a := New(opts, src, status, &rest.Config{Host: member.URL}, log)
	a.lastProbe = time.Now() // measured just now: Once reads the Work only

	for i, step := range []struct {
		name   string
		commit plumbing.Hash
		reason string
		text   string
	}{
		{"unsigned", unsigned, verify.ReasonUnsigned, "not signed"},
		{"signed by a key that is not trusted", byMallory, verify.ReasonUntrusted, "is not in the trusted keys"},
	} {
		r := refusal(step.commit)
		src.set(r)
		for range 3 {
			a.Once(ctx)
		}
		short := workv1alpha1.ShortRevision(step.commit.String())
		st, err := status.GetStatus(ctx, "edge-1")
		if err != nil {
			t.Fatal(err)
		}
		want := r.Error() + "; what is applied stays"
		if st.Message != want {
			t.Errorf("%s: status message %q, want %q", step.name, st.Message, want)
		}
		if !strings.Contains(st.Message[:60], short) {
			t.Errorf("%s: the first 60 characters of the status message (what propagit status shows) do not name %s: %q", step.name, short, st.Message)
		}
		for _, s := range []string{short, where, step.text} {
			if !strings.Contains(st.Message, s) {
				t.Errorf("%s: status message %q does not say %q", step.name, st.Message, s)
			}
		}
		if st.AppliedRevision != applied {
			t.Errorf("%s: applied revision %q, want %s kept", step.name, st.AppliedRevision, applied)
		}
		if !meta.IsStatusConditionTrue(st.Conditions, workv1alpha1.ConditionReady) || len(st.Inventory) != 2 {
			t.Errorf("%s: the status lost what the member runs: conditions %+v, inventory %v", step.name, st.Conditions, st.Inventory)
		}
		if got := refusedTotal(t, reg, step.reason); got != 1 {
			t.Errorf("%s: propagit_works_refused_total{reason=%q} = %v after 3 polls, want 1", step.name, step.reason, got)
		}
		if n := refusalLines(short); n != 1 {
			t.Errorf("%s: %d log lines say the Work of %s is refused, want 1", step.name, n, short)
		}
		if i == 1 {
			if got := refusedTotal(t, reg, verify.ReasonUnsigned); got != 1 {
				t.Errorf("the first refusal's count moved to %v", got)
			}
		}
	}
	if n := memberRequests.Load(); n != 0 {
		t.Errorf("the agent made %d requests to its member while refusing the Work, want 0", n)
	}
}
