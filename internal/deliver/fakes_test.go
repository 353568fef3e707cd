package deliver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
)

// fakeApplier answers like an apply.Manager whose every object is applied
// (the first failed ones excepted) and has the same health, and records
// which methods were called.
type fakeApplier struct {
	calls []string
	// applyErr fails Apply and ApplyChanges as a whole.
	applyErr error
	// failed is how many objects each apply reports Failed.
	failed int
	// health is every object's health; healthErr fails Health.
	health    workv1alpha1.Health
	healthErr error
	// drift is what Check reports; checked the names it was given.
	drift   []apply.Drift
	checked [][]string
	// onApply, when set, is called as Apply or ApplyChanges starts.
	onApply func()
}

func (f *fakeApplier) result(desired []*unstructured.Unstructured, removed, inventory []workv1alpha1.ObjectRef) *apply.Result {
	res := &apply.Result{}
	for i, o := range desired {
		r := workv1alpha1.ObjectResult{ObjectRef: workv1alpha1.RefOf(o), Action: workv1alpha1.ActionCreated}
		if i < f.failed {
			r.Action, r.Message = workv1alpha1.ActionFailed, "denied by a webhook"
			res.Failed++
		}
		res.Objects = append(res.Objects, r)
	}
	gone := map[workv1alpha1.ObjectKey]bool{}
	for _, r := range removed {
		gone[r.ObjectKey] = true
		res.Objects = append(res.Objects, workv1alpha1.ObjectResult{ObjectRef: r, Action: workv1alpha1.ActionPruned})
	}
	for _, r := range inventory {
		if !gone[r.ObjectKey] {
			res.Inventory = append(res.Inventory, r)
		}
	}
	return res
}

func (f *fakeApplier) Apply(_ context.Context, desired []*unstructured.Unstructured, inventory []workv1alpha1.ObjectRef) (*apply.Result, error) {
	f.calls = append(f.calls, "Apply")
	if f.onApply != nil {
		f.onApply()
	}
	if f.applyErr != nil {
		return nil, f.applyErr
	}
	return f.result(desired, nil, inventory), nil
}

func (f *fakeApplier) ApplyChanges(_ context.Context, changed []*unstructured.Unstructured, removed, inventory []workv1alpha1.ObjectRef) (*apply.Result, error) {
	f.calls = append(f.calls, "ApplyChanges")
	if f.onApply != nil {
		f.onApply()
	}
	if f.applyErr != nil {
		return nil, f.applyErr
	}
	return f.result(changed, removed, inventory), nil
}

func (f *fakeApplier) Check(_ context.Context, desired []*unstructured.Unstructured, inventory []workv1alpha1.ObjectRef) (*apply.Result, error) {
	f.calls = append(f.calls, "Check")
	var names []string
	for _, o := range desired {
		names = append(names, o.GetName())
	}
	f.checked = append(f.checked, names)
	return &apply.Result{Inventory: inventory, Drift: f.drift}, nil
}

func (f *fakeApplier) Health(_ context.Context, inventory []workv1alpha1.ObjectRef) ([]workv1alpha1.ObjectResult, error) {
	f.calls = append(f.calls, "Health")
	if f.healthErr != nil {
		return nil, f.healthErr
	}
	out := make([]workv1alpha1.ObjectResult, len(inventory))
	for i, r := range inventory {
		out[i] = workv1alpha1.ObjectResult{ObjectRef: r, Health: f.health}
	}
	return out, nil
}

func (f *fakeApplier) Config() *rest.Config        { return nil }
func (f *fakeApplier) RESTMapper() meta.RESTMapper { return nil }
func (f *fakeApplier) FieldManager() string        { return "propagit" }

// fakeStore is a status store in memory that can fail.
type fakeStore struct {
	stored         *workv1alpha1.WorkStatus
	getErr, putErr error
	puts           int
}

func (f *fakeStore) GetStatus(context.Context, string) (*workv1alpha1.WorkStatus, error) {
	if f.getErr != nil {
		return nil, f.getErr
	}
	if f.stored == nil {
		return &workv1alpha1.WorkStatus{}, nil
	}
	return f.stored.DeepCopy(), nil
}

func (f *fakeStore) PutStatus(_ context.Context, _ string, st *workv1alpha1.WorkStatus) error {
	f.puts++
	if f.putErr != nil {
		return f.putErr
	}
	f.stored = st.DeepCopy()
	return nil
}

// fakeWatch records what the drift watch was pointed at.
type fakeWatch struct {
	from   Watchable
	sets   int
	closed bool
}

func (f *fakeWatch) set([]workv1alpha1.ObjectRef) { f.sets++ }
func (f *fakeWatch) close()                       { f.closed = true }

// harness is one Syncer over fakes.
type harness struct {
	s       *Syncer
	app     *fakeApplier
	store   *fakeStore
	clock   *clocktesting.FakePassiveClock
	watches []*fakeWatch
	// applierErr fails building the applier; appliers counts the builds.
	applierErr error
	builds     int
	// atApply is what the store held each time an apply started.
	atApply []applySeen
}

// applySeen is the status store as an apply started: its write count and
// the names in its inventory.
type applySeen struct {
	puts      int
	inventory []string
}

var t0 = time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)

func testOptions() Options {
	opts := DefaultOptions()
	opts.RetryMin, opts.RetryMax = time.Second, 5*time.Second
	opts.Version = "test"
	return opts
}

func newHarness(t *testing.T, opts Options, options ...Option) *harness {
	t.Helper()
	h := &harness{app: &fakeApplier{health: workv1alpha1.HealthCurrent}, store: &fakeStore{}, clock: clocktesting.NewFakePassiveClock(t0)}
	applier := func(context.Context) (Applier, error) {
		if h.applierErr != nil {
			return nil, h.applierErr
		}
		h.builds++
		return h.app, nil
	}
	h.s = New("member1", opts, h.store, applier, logr.Discard(), append([]Option{WithClock(h.clock)}, options...)...)
	h.s.newWatch = func(a Watchable, _ logr.Logger, _ func(workv1alpha1.ObjectRef, bool)) driftWatch {
		w := &fakeWatch{from: a}
		h.watches = append(h.watches, w)
		return w
	}
	t.Cleanup(h.s.Close)
	return h
}

var errBoom = errors.New("boom")
