package gitstore

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/gitrepo"
	"github.com/propagit/propagit/internal/works"
)

// bigStatus is a status with n objects in its inventory and results, one
// drift record, and a reflected status on the first object.
func bigStatus(rev string, n int) *workv1alpha1.WorkStatus {
	st := testStatus(rev, metav1.ConditionTrue, t0)
	st.Inventory = nil
	for i := range n {
		ref := workv1alpha1.ObjectRef{ObjectKey: workv1alpha1.ObjectKey{Kind: "ConfigMap", Namespace: "app", Name: fmt.Sprintf("cm-%04d", i)}, Version: "v1"}
		st.Inventory = append(st.Inventory, ref)
		st.Objects = append(st.Objects, workv1alpha1.ObjectResult{ObjectRef: ref, Action: workv1alpha1.ActionCreated, Health: "Current"})
	}
	st.Objects[0].Status = &runtime.RawExtension{Raw: []byte(`{"replicas":2}`)}
	st.Drift = []workv1alpha1.DriftRecord{{ObjectRef: st.Inventory[1], Manager: "kubectl", Fields: []string{".data.v"},
		Action: workv1alpha1.DriftCorrected, Time: metav1.Time{Time: t0}}}
	st.Message = `quotes " and <html> & unicode é`
	return st
}

// A record written as YAML before the change reads as it was written, and
// the next record (JSON) reads the same both as JSON and with the YAML
// reader older builds use.
func TestStatusReadsOldYAMLRecords(t *testing.T) {
	r := fileRemote(t)
	ctx := ctxT(t)
	old := works.Normalize(bigStatus("rev1", 5))
	data, err := yaml.Marshal(old) // the format of records written before
	if err != nil {
		t.Fatal(err)
	}
	repo := r.Repo(t)
	tree, err := gitrepo.WriteFiles(repo.Storer, map[string][]byte{StatusFile: data})
	if err != nil {
		t.Fatal(err)
	}
	sig := object.Signature{Name: "propagit", When: t0}
	commit, err := gitrepo.WriteObject(repo.Storer, &object.Commit{Author: sig, Committer: sig, Message: "propagit: status m1\n", TreeHash: tree})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference(StatusRef("m1"), commit)); err != nil {
		t.Fatal(err)
	}
	g := r.store(t)
	got, err := g.GetStatus(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(old, got); d != "" {
		t.Errorf("old YAML record (-want +got):\n%s", d)
	}
	next := bigStatus("rev2", 6)
	if err := g.PutStatus(ctx, "m1", next); err != nil {
		t.Fatal(err)
	}
	got, err = r.store(t).GetStatus(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(works.Normalize(next), got); d != "" {
		t.Errorf("JSON record (-want +got):\n%s", d)
	}
	raw := r.TipFiles(t, StatusRef("m1"))[StatusFile]
	if raw == "" || raw[0] != '{' {
		t.Fatalf("new record is not JSON: %.40q", raw)
	}
	byOldReader := &workv1alpha1.WorkStatus{}
	if err := yaml.Unmarshal([]byte(raw), byOldReader); err != nil {
		t.Fatalf("a YAML reader cannot read the JSON record: %v", err)
	}
	if d := cmp.Diff(works.Normalize(next), works.Normalize(byOldReader)); d != "" {
		t.Errorf("JSON record read as YAML (-want +got):\n%s", d)
	}
}

// A status that changed in one object encodes one entry; one that did not
// change writes and encodes nothing.
func TestStatusEncodesOnlyChangedEntries(t *testing.T) {
	r := fileRemote(t)
	ctx := ctxT(t)
	g := r.store(t)
	st := bigStatus("rev1", 500)
	if err := g.PutStatus(ctx, "m1", st); err != nil {
		t.Fatal(err)
	}
	if got := written(g, works.WriteCounts{}); got.StatusWrites != 1 || got.StatusEntries != 1000 {
		t.Errorf("first record: %d writes, %d entries encoded; want 1 and 1000", got.StatusWrites, got.StatusEntries)
	}
	before := g.Written()
	if err := g.PutStatus(ctx, "m1", bigStatus("rev1", 500)); err != nil {
		t.Fatal(err)
	}
	if got := written(g, before); got.StatusWrites != 0 || got.StatusEntries != 0 {
		t.Errorf("unchanged status: %d writes, %d entries encoded; want none", got.StatusWrites, got.StatusEntries)
	}
	next := bigStatus("rev2", 500)
	next.Objects[321].Action = workv1alpha1.ActionConfigured
	next.Conditions[1].Message = "1 configured"
	if err := g.PutStatus(ctx, "m1", next); err != nil {
		t.Fatal(err)
	}
	if got := written(g, before); got.StatusWrites != 1 || got.StatusEntries != 1 {
		t.Errorf("one object changed: %d writes, %d entries encoded; want 1 and 1", got.StatusWrites, got.StatusEntries)
	}
	got, err := r.store(t).GetStatus(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	want := works.Normalize(next)
	want.Conditions[1].LastTransitionTime = metav1.Time{Time: t0.Truncate(time.Second)}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("record after one change (-want +got):\n%s", d)
	}
}

// works.SameResult and the status encoder's reuse compare an object result field
// by field: a new field must be compared there too.
func TestSameResultKnowsEveryField(t *testing.T) {
	if n := reflect.TypeFor[workv1alpha1.ObjectResult]().NumField(); n != 5 {
		t.Errorf("ObjectResult has %d fields, works.SameResult compares 5", n)
	}
}
