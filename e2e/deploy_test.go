package e2e

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
	"github.com/propagit/propagit/internal/testenv"
)

// TestDeployManifestsApplyServerSide builds each deploy/ variant with
// kustomize and applies it server-side to a fresh real apiserver: every
// object must be created, and a second apply must change nothing.
func TestDeployManifestsApplyServerSide(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"../deploy", "../deploy/agent/cluster-wide", "../deploy/agent/cluster-wide-bind", "../deploy/agent/namespaced"} {
		t.Run(dir, func(t *testing.T) { applyDeploy(t, dir) })
	}
}

func applyDeploy(t *testing.T, dir string) {
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range resMap.Resources() {
		js, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			t.Fatal(err)
		}
		// As if rendered: propagit stamps its managed label on what it applies.
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[workv1alpha1.LabelManaged] = "true"
		u.SetLabels(labels)
		objs = append(objs, u)
	}
	if len(objs) < 3 {
		t.Fatalf("%s built only %d objects", dir, len(objs))
	}
	env := testenv.Start(t, testenv.Options{Members: 1})
	mgr, err := apply.NewForConfig(env.Members[0].Config, apply.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	first, err := mgr.Apply(ctx, objs, nil)
	if err != nil || first.Failed > 0 {
		t.Fatalf("first apply: err=%v result=%s objects=%+v", err, first, first.Objects)
	}
	if got := first.Count(workv1alpha1.ActionCreated); got != len(objs) {
		t.Errorf("created %d of %d objects: %+v", got, len(objs), first.Objects)
	}
	second, err := mgr.Apply(ctx, objs, first.Inventory)
	if err != nil || second.Failed > 0 {
		t.Fatalf("second apply: err=%v result=%s objects=%+v", err, second, second.Objects)
	}
	if got := second.Count(workv1alpha1.ActionUnchanged); got != len(objs) {
		t.Errorf("re-apply changed objects: %+v", second.Objects)
	}
}
