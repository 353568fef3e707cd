package render_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/e2e/fleet"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
)

// TestCachedTemplatesStayPristine: a load.Cache hands the same template
// objects to every Load until their file changes, so nothing the controller
// does with a Set may change them. Each example fleet and a generated one
// go through what the controller runs (Render with a Memo, twice, with the
// previous Works; Explain of every binding; Lint); then the cache's next
// Load must equal a fresh parse: templates, policies and clusters.
func TestCachedTemplatesStayPristine(t *testing.T) {
	type repo struct {
		fs   filesys.FileSystem
		root string
	}
	repos := map[string]repo{}
	dirs, err := filepath.Glob("../../examples/*/fleet")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			t.Fatal(err)
		}
		repos[filepath.Base(filepath.Dir(d))] = repo{filesys.MakeFsOnDisk(), abs}
	}
	m, err := fleet.New(60, 12)
	if err != nil {
		t.Fatal(err)
	}
	gen := filesys.MakeFsInMemory()
	if err := m.WriteRepo(gen, "/repo"); err != nil {
		t.Fatal(err)
	}
	repos["generated"] = repo{gen, "/repo"}

	for name, r := range repos {
		t.Run(name, func(t *testing.T) {
			cache, memo := load.NewCache(), incremental.NewMemo()
			var prev *render.Previous
			for range 2 {
				set, err := cache.Load(r.fs, r.root)
				if err != nil {
					t.Fatal(err)
				}
				res := memo.Render(render.Input{Set: set, Options: render.DefaultOptions(), Previous: prev})
				for _, b := range res.Bindings {
					render.Explain(b, res.Clusters)
				}
				render.Lint(set, res)
				prev = render.PreviousFromWorks(res.Works)
			}
			cached, err := cache.Load(r.fs, r.root)
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := load.Load(r.fs, r.root)
			if err != nil {
				t.Fatal(err)
			}
			if len(cached.Templates) != len(fresh.Templates) {
				t.Fatalf("%d cached templates, %d parsed", len(cached.Templates), len(fresh.Templates))
			}
			// Policies and Clusters are shared too, and the Memo keeps their
			// digests by pointer.
			for i, p := range cached.Propagations {
				if !reflect.DeepEqual(p.Policy, fresh.Propagations[i].Policy) {
					t.Errorf("propagation policy %s (%s) changed in the cache after a render", p.Policy.Name, p.Source)
				}
			}
			for i, o := range cached.Overrides {
				if !reflect.DeepEqual(o.Policy, fresh.Overrides[i].Policy) {
					t.Errorf("override policy %s (%s) changed in the cache after a render", o.Policy.Name, o.Source)
				}
			}
			for i, c := range cached.Clusters {
				if !reflect.DeepEqual(c.Cluster, fresh.Clusters[i].Cluster) {
					t.Errorf("cluster %s (%s) changed in the cache after a render", c.Cluster.Name, c.Source)
				}
			}
			for i, c := range cached.Templates {
				if !reflect.DeepEqual(c.Object.Object, fresh.Templates[i].Object.Object) {
					t.Errorf("%s (%s) changed in the cache after a render:\n got %v\nwant %v",
						c.Object.GetName(), c.Source, c.Object.Object, fresh.Templates[i].Object.Object)
				}
			}
		})
	}
}
