package deliver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
)

func work(t *testing.T, rev string, manifests ...string) *workv1alpha1.Work {
	t.Helper()
	w := workOf(t, manifests...)
	w.Spec.Cluster, w.Spec.FormatVersion, w.Spec.SourceRevision = "member1", workv1alpha1.FormatVersion, rev
	return w
}

// step is one call to the Syncer and what it must leave behind.
type step struct {
	// before changes the fakes; advance moves the clock; call is the call
	// (default: Sync of the case's Work with no source error).
	before  func(h *harness)
	advance time.Duration
	call    func(ctx context.Context, h *harness) time.Duration
	// requeue is the duration the call returns; calls the applier methods
	// it called, in order; writes the status writes it attempted.
	requeue time.Duration
	calls   []string
	writes  int
	// conds are "Type=Status/Reason" the status must hold; message is its
	// Message.
	conds   []string
	message string
	// check asserts anything else.
	check func(t *testing.T, h *harness)
}

func TestSyncerStateMachine(t *testing.T) {
	w1 := work(t, "1111111111111111", cm("a", "1"), cm("b", "1"))
	w2 := work(t, "2222222222222222", cm("a", "2"), cm("b", "1"))
	w3 := work(t, "5555555555555555", cm("a", "2"), cm("b", "1"), cm("c", "1"))
	tooNew := work(t, "3333333333333333", cm("a", "1"))
	tooNew.Spec.FormatVersion = workv1alpha1.FormatVersion + 1
	suspended := w1.DeepCopy()
	suspended.Spec.Suspended = true
	invalid := work(t, "4444444444444444", `{"kind":`)

	opts := testOptions() // RetryMin 1s, RetryMax 5s, HealthInterval 5s, DriftInterval 5m
	const health, drift = 5 * time.Second, 5 * time.Minute
	sync := func(w *workv1alpha1.Work, sourceErr string) func(context.Context, *harness) time.Duration {
		return func(ctx context.Context, h *harness) time.Duration { return h.s.Sync(ctx, w, sourceErr) }
	}
	unreachable := func(w *workv1alpha1.Work) func(context.Context, *harness) time.Duration {
		return func(ctx context.Context, h *harness) time.Duration { return h.s.Unreachable(ctx, w, "", "") }
	}
	unreachableBecause := func(w *workv1alpha1.Work, probe string) func(context.Context, *harness) time.Duration {
		return func(ctx context.Context, h *harness) time.Duration { return h.s.Unreachable(ctx, w, "", probe) }
	}
	readyMessage := func(want string) func(t *testing.T, h *harness) {
		return func(t *testing.T, h *harness) {
			t.Helper()
			if c := meta.FindStatusCondition(h.s.Status().Conditions, workv1alpha1.ConditionReady); c == nil || c.Message != want {
				t.Errorf("Ready = %+v, want message %q", c, want)
			}
		}
	}
	applyOK := step{requeue: drift, calls: []string{"Apply", "Health"}, writes: 2,
		conds: []string{"Applied=True/Applied", "Healthy=True/Healthy", "Ready=True/Ready"}}
	failApply := func(h *harness) { h.app.applyErr = errBoom }
	// applyFailed is an apply that fails; the first of a Work also records
	// its inventory before applying (2 writes), a retry has nothing new to
	// record first (1 write).
	applyFailed := func(requeue time.Duration, writes int) step {
		return step{before: failApply, requeue: requeue, calls: []string{"Apply"}, writes: writes,
			conds: []string{"Applied=False/ApplyFailed", "Ready=False/ApplyFailed"}}
	}
	// recordAtApply makes the applier note the stored status each time an
	// apply starts; storedAtApply checks what the i-th apply found.
	recordAtApply := func(h *harness) {
		h.app.onApply = func() {
			var names []string
			if h.store.stored != nil {
				for _, r := range h.store.stored.Inventory {
					names = append(names, r.Name)
				}
			}
			h.atApply = append(h.atApply, applySeen{puts: h.store.puts, inventory: names})
		}
	}
	storedAtApply := func(i int, names ...string) func(t *testing.T, h *harness) {
		return func(t *testing.T, h *harness) {
			t.Helper()
			if len(h.atApply) <= i || !slices.Equal(h.atApply[i].inventory, names) {
				t.Errorf("stored inventory when apply %d started: %+v, want %v", i, h.atApply, names)
			}
		}
	}
	noApplier := func(t *testing.T, h *harness) {
		if h.builds != 0 {
			t.Errorf("the applier was built %d times, want never", h.builds)
		}
	}

	tests := []struct {
		name    string
		work    *workv1alpha1.Work
		options []Option
		steps   []step
	}{
		{name: "format too new: nothing applied, the status says upgrade", work: tooNew, steps: []step{{
			requeue: 0, writes: 1, conds: []string{"Ready=False/FormatTooNew"},
			message: "agent too old for Work format 2 (it understands 1): nothing applied, what runs is kept; upgrade the agent",
			check:   noApplier,
		}}},
		{name: "suspended: the member is not touched", work: suspended, steps: []step{{
			requeue: 0, writes: 1, conds: []string{"Ready=False/Suspended"}, check: noApplier,
		}}},
		{name: "unreachable: applying waits", work: w1, steps: []step{{
			call: unreachable(w1), requeue: 0, writes: 1, conds: []string{"Ready=False/MemberNotReady"},
			check: func(t *testing.T, h *harness) {
				noApplier(t, h)
				readyMessage("the member did not answer its last probe; applying waits")(t, h)
			},
		}}},
		{name: "unreachable: Ready carries the probe's cause, and a new cause is written", work: w1, steps: []step{{
			call: unreachableBecause(w1, "NoCredentials: no credentials"), requeue: 0, writes: 1, conds: []string{"Ready=False/NoCredentials"},
			check: readyMessage("member not reachable: NoCredentials: no credentials; applying waits"),
		}, {
			call: unreachableBecause(w1, "ClusterUnreachable: readyz failed: connection refused"), requeue: 0, writes: 1,
			conds: []string{"Ready=False/MemberNotReady"},
			check: func(t *testing.T, h *harness) {
				noApplier(t, h)
				readyMessage("member not reachable: ClusterUnreachable: readyz failed: connection refused; applying waits")(t, h)
			},
		}}},
		{name: "unreachable and suspended: suspended wins", work: w1, steps: []step{{
			call: unreachable(suspended), requeue: 0, writes: 1, conds: []string{"Ready=False/Suspended"}, check: noApplier,
		}}},
		{name: "no client: backoff", work: w1, steps: []step{{
			before:  func(h *harness) { h.applierErr = errBoom },
			requeue: time.Second, writes: 1, conds: []string{"Ready=False/NoClient"},
		}}},
		{name: "invalid Work: nothing applied", work: invalid, steps: []step{{
			requeue: time.Second, writes: 1, conds: []string{"Applied=False/InvalidWork"},
		}}},
		{name: "apply failed with an error", work: w1, steps: []step{applyFailed(time.Second, 2)}},
		{name: "apply failed for some objects", work: w1, steps: []step{{
			before:  func(h *harness) { h.app.failed = 1 },
			requeue: time.Second, calls: []string{"Apply"}, writes: 2,
			conds: []string{"Applied=False/ApplyFailed", "Ready=False/ApplyFailed"},
			check: func(t *testing.T, h *harness) {
				c := meta.FindStatusCondition(h.s.Status().Conditions, workv1alpha1.ConditionApplied)
				if want := "1 of 2 objects failed: denied by a webhook"; c.Message != want {
					t.Errorf("Applied message = %q, want %q", c.Message, want)
				}
			},
		}}},
		{name: "applied then healthy; unchanged and healthy costs no applier call", work: w1, steps: []step{
			{requeue: drift, calls: []string{"Apply", "Health"}, writes: 2,
				conds: []string{"Applied=True/Applied", "Healthy=True/Healthy", "Ready=True/Ready"},
				check: func(t *testing.T, h *harness) {
					st := h.s.Status()
					if st.AppliedDigest != workv1alpha1.Digest(w1) || st.AppliedRevision != w1.Spec.SourceRevision || st.AgentVersion != "test" {
						t.Errorf("status = digest %q revision %q version %q, want the Work's", st.AppliedDigest, st.AppliedRevision, st.AgentVersion)
					}
					if len(h.watches) != 1 || h.watches[0].sets != 1 {
						t.Errorf("drift watch: %d built, want 1 pointed at the inventory", len(h.watches))
					}
				}},
			{advance: time.Minute, requeue: drift, writes: 0, conds: []string{"Ready=True/Ready"},
				check: func(t *testing.T, h *harness) {
					if len(h.watches) != 1 || h.watches[0].closed {
						t.Errorf("drift watches = %+v, want the first one kept", h.watches)
					}
				}},
		}},
		{name: "progressing, then healthy without applying again", work: w1, steps: []step{
			{before: func(h *harness) { h.app.health = workv1alpha1.HealthInProgress },
				requeue: health, calls: []string{"Apply", "Health"}, writes: 2,
				conds: []string{"Applied=True/Applied", "Healthy=False/Progressing", "Ready=False/Progressing"}},
			{before: func(h *harness) { h.app.health = workv1alpha1.HealthCurrent }, advance: health,
				requeue: drift, calls: []string{"Health"}, writes: 1, conds: []string{"Healthy=True/Healthy", "Ready=True/Ready"}},
		}},
		{name: "health unknown", work: w1, steps: []step{{
			before:  func(h *harness) { h.app.healthErr = errBoom },
			requeue: health, calls: []string{"Apply", "Health"}, writes: 2,
			conds: []string{"Applied=True/Applied", "Healthy=Unknown/HealthUnknown", "Ready=False/HealthUnknown"},
		}}},
		{name: "an object gone from the member is applied again", work: w1, steps: []step{
			{before: func(h *harness) { h.app.health = workv1alpha1.HealthNotFound },
				requeue: health, calls: []string{"Apply", "Health"}, writes: 2, conds: []string{"Ready=False/Progressing"}},
			{before: func(h *harness) { h.app.health = workv1alpha1.HealthCurrent },
				requeue: drift, calls: []string{"Apply", "Health"}, writes: 1, conds: []string{"Ready=True/Ready"}},
		}},
		{name: "a changed Work applies only the change", work: w1, steps: []step{
			applyOK,
			{call: sync(w2, ""), requeue: drift, calls: []string{"ApplyChanges", "Health"}, writes: 1,
				conds: []string{"Applied=True/Applied", "Ready=True/Ready"}},
		}},
		{name: "what an apply may create is recorded before it starts; a change to recorded objects is applied first", work: w1, steps: []step{
			{before: recordAtApply, requeue: drift, calls: []string{"Apply", "Health"}, writes: 2, check: storedAtApply(0, "a", "b")},
			// Two writes so far, both before this apply: none was made before it.
			{call: sync(w2, ""), requeue: drift, calls: []string{"ApplyChanges", "Health"}, writes: 1, check: func(t *testing.T, h *harness) {
				if n := h.atApply[1].puts; n != 2 {
					t.Errorf("%d status writes when the change was applied, want 2 (none before the apply)", n)
				}
			}},
			{call: sync(w3, ""), requeue: drift, calls: []string{"ApplyChanges", "Health"}, writes: 2, check: storedAtApply(2, "a", "b", "c")},
		}},
		{name: "periodic drift check compares everything and records the correction", work: w1, steps: []step{
			applyOK,
			{before: func(h *harness) {
				h.app.drift = []apply.Drift{{ObjectRef: ref("a"), Fields: []string{"data.k"}, Manager: "kubectl-edit", Corrected: true}}
			}, advance: drift, requeue: drift, calls: []string{"Check", "Health"}, writes: 1, conds: []string{"Ready=True/Ready"},
				check: func(t *testing.T, h *harness) {
					if !slices.Equal(h.app.checked[0], []string{"a", "b"}) {
						t.Errorf("checked %v, want every object", h.app.checked[0])
					}
					d := h.s.Status().Drift
					if len(d) != 1 || d[0].Action != workv1alpha1.DriftCorrected || d[0].Name != "a" || d[0].Manager != "kubectl-edit" {
						t.Errorf("drift records = %+v, want a corrected", d)
					}
					if len(h.watches) != 1 {
						t.Errorf("%d drift watches built, want 1: the applier did not change", len(h.watches))
					}
				}},
		}},
		{name: "a suspect from the watch is checked alone", work: w1, steps: []step{
			applyOK,
			{before: func(h *harness) { h.s.suspect(ref("b"), true) }, advance: time.Minute,
				requeue: drift, calls: []string{"Check", "Health"}, writes: 1, conds: []string{"Ready=True/Ready"},
				check: func(t *testing.T, h *harness) {
					if !slices.Equal(h.app.checked[0], []string{"b"}) {
						t.Errorf("checked %v, want only the suspect", h.app.checked[0])
					}
					select {
					case <-h.s.Suspect():
					default:
						t.Error("the driver was not signalled")
					}
				}},
			{advance: time.Minute, requeue: drift, writes: 0},
		}},
		{name: "a status change reads health again: a healthy object that fails turns the Work not Ready", work: w1, steps: []step{
			applyOK,
			{before: func(h *harness) {
				h.app.health = workv1alpha1.HealthInProgress
				h.s.suspect(ref("b"), false)
			}, advance: time.Minute, requeue: health, calls: []string{"Health"}, writes: 1,
				conds: []string{"Healthy=False/Progressing", "Ready=False/Progressing"},
				check: func(t *testing.T, h *harness) {
					if len(h.app.checked) != 0 {
						t.Errorf("a status change was checked for drift: %v", h.app.checked)
					}
					for _, o := range h.s.Status().Objects {
						if want := map[bool]workv1alpha1.Health{true: workv1alpha1.HealthInProgress, false: workv1alpha1.HealthCurrent}[o.Name == "b"]; o.Health != want {
							t.Errorf("%s health %s, want %s", o.Name, o.Health, want)
						}
					}
				}},
			{before: func(h *harness) { h.app.health = workv1alpha1.HealthCurrent }, advance: health,
				requeue: drift, calls: []string{"Health"}, writes: 1, conds: []string{"Ready=True/Ready"}},
		}},
		{name: "backoff doubles up to RetryMax and resets after a success", work: w1, steps: []step{
			applyFailed(time.Second, 2), applyFailed(2*time.Second, 1), applyFailed(4*time.Second, 1), applyFailed(5*time.Second, 1),
			{before: func(h *harness) { h.app.applyErr = nil }, requeue: drift, calls: []string{"Apply", "Health"}, writes: 1,
				conds: []string{"Ready=True/Ready"}},
			// A revert to what failed applies again, and backs off from the start.
			{call: sync(w2, ""), before: failApply, requeue: time.Second, calls: []string{"ApplyChanges"}, writes: 1,
				conds: []string{"Ready=False/ApplyFailed"}},
		}},
		{name: "source error message comes and goes without touching the member", work: w1, steps: []step{
			applyOK,
			{call: sync(w1, "failed to load the source"), requeue: drift, writes: 1,
				conds: []string{"Ready=True/Ready"}, message: "failed to load the source"},
			{call: sync(w1, "failed to load the source"), requeue: drift, writes: 0, message: "failed to load the source"},
			{requeue: drift, writes: 1, message: ""},
			{call: func(ctx context.Context, h *harness) time.Duration {
				h.s.SourceError(ctx, "work source unreachable")
				return 0
			},
				writes: 1, conds: []string{"Ready=True/Ready"}, message: "work source unreachable"},
		}},
		{name: "status write failure: the apply is not taken as recorded", work: w1, steps: []step{
			{before: func(h *harness) { h.store.putErr = errBoom }, requeue: drift, calls: []string{"Apply", "Health"}, writes: 2,
				check: func(t *testing.T, h *harness) {
					if h.s.Status().AppliedDigest != "" || h.store.stored != nil {
						t.Errorf("a status that failed to write is taken as written: %+v", h.s.Status())
					}
				}},
			{before: func(h *harness) { h.store.putErr = nil }, requeue: drift, calls: []string{"Apply", "Health"}, writes: 2,
				conds: []string{"Ready=True/Ready"}},
		}},
		{name: "last status unreadable: backoff, then carry on", work: w1, steps: []step{
			{before: func(h *harness) { h.store.getErr = errBoom }, requeue: time.Second, writes: 0, check: noApplier},
			{before: func(h *harness) { h.store.getErr = nil }, requeue: drift, calls: []string{"Apply", "Health"}, writes: 2,
				conds: []string{"Ready=True/Ready"}},
		}},
		{name: "a driver's stamp is written on every sync", work: w1,
			options: []Option{WithStamp(func(st *workv1alpha1.WorkStatus) bool {
				st.Heartbeat = &metav1.Time{Time: t0}
				return true
			})},
			steps: []step{
				applyOK,
				{advance: time.Minute, requeue: drift, writes: 1, conds: []string{"Ready=True/Ready"},
					check: func(t *testing.T, h *harness) {
						if h.store.stored.Heartbeat == nil {
							t.Error("the stamp is not in the written status")
						}
					}},
			}},
		{name: "a new applier rebuilds the drift watch of an unchanged Work at once, with no call to the member", work: w1, steps: []step{
			applyOK,
			{before: func(h *harness) { h.app = &fakeApplier{health: workv1alpha1.HealthCurrent} }, advance: time.Minute,
				requeue: drift, writes: 0, conds: []string{"Ready=True/Ready"},
				check: func(t *testing.T, h *harness) {
					if len(h.watches) != 2 || !h.watches[0].closed || h.watches[1].from != Watchable(h.app) || h.watches[1].sets != 1 {
						t.Errorf("drift watches = %+v, want the first closed and a second from the new applier", h.watches)
					}
				}},
		}},
		{name: "a new applier (new credentials) rebuilds the drift watch", work: w1, steps: []step{
			applyOK,
			{before: func(h *harness) { h.app = &fakeApplier{health: workv1alpha1.HealthCurrent} }, advance: drift,
				requeue: drift, calls: []string{"Check", "Health"}, writes: 1,
				check: func(t *testing.T, h *harness) {
					if len(h.watches) != 2 || !h.watches[0].closed || h.watches[1].from != Watchable(h.app) || h.watches[1].closed {
						t.Errorf("drift watches = %+v, want the first closed and a second from the new applier", h.watches)
					}
				}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			h := newHarness(t, opts, tc.options...)
			for i, s := range tc.steps {
				if s.before != nil {
					s.before(h)
				}
				h.clock.SetTime(h.clock.Now().Add(s.advance))
				calls, writes := len(h.app.calls), h.store.puts
				call := s.call
				if call == nil {
					call = sync(tc.work, "")
				}
				got := call(ctx, h)
				t.Run(fmt.Sprint("step ", i), func(t *testing.T) {
					if got != s.requeue {
						t.Errorf("requeue = %s, want %s", got, s.requeue)
					}
					if c := h.app.calls[min(calls, len(h.app.calls)):]; !slices.Equal(c, s.calls) {
						t.Errorf("applier calls = %v, want %v", c, s.calls)
					}
					if n := h.store.puts - writes; n != s.writes {
						t.Errorf("status writes = %d, want %d", n, s.writes)
					}
					checkStatus(t, h.s.Status(), s.conds, s.message)
					if s.check != nil {
						s.check(t, h)
					}
				})
			}
		})
	}
}

func checkStatus(t *testing.T, st *workv1alpha1.WorkStatus, conds []string, message string) {
	t.Helper()
	if st == nil {
		if len(conds) > 0 || message != "" {
			t.Errorf("no status, want %v %q", conds, message)
		}
		return
	}
	for _, want := range conds {
		typ, rest, _ := strings.Cut(want, "=")
		c := meta.FindStatusCondition(st.Conditions, typ)
		if c == nil {
			t.Errorf("no %s condition, want %s", typ, rest)
			continue
		}
		if got := string(c.Status) + "/" + c.Reason; got != rest {
			t.Errorf("%s = %s (%s), want %s", typ, got, c.Message, rest)
		}
	}
	if st.Message != message {
		t.Errorf("message = %q, want %q", st.Message, message)
	}
}
