package folder

import (
	"path"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/works"
)

// TestWriteHoldsTheWorkBranchFiles renders every example and writes it:
// each cluster's folder holds exactly the files of its folder on the work
// branch (the Git store's works.EncodeManifest of its Work's manifests),
// byte for byte, less works.WorkFile, and reads back as the same objects.
func TestWriteHoldsTheWorkBranchFiles(t *testing.T) {
	dirs, err := filepath.Glob("../../../examples/*/fleet")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, fleet := range dirs {
		t.Run(filepath.Base(filepath.Dir(fleet)), func(t *testing.T) {
			abs, err := filepath.Abs(fleet)
			if err != nil {
				t.Fatal(err)
			}
			set, err := load.Load(filesys.MakeFsOnDisk(), abs)
			if err != nil {
				t.Fatal(err)
			}
			rendered := render.Render(render.Input{Set: set, Options: render.DefaultOptions()}).Works
			out := filepath.Join(t.TempDir(), "out")
			if err := Write(out, rendered, LayoutObject); err != nil {
				t.Fatal(err)
			}
			got := readTree(t, out)
			want := map[string]string{Marker: got[Marker]}
			for _, w := range rendered {
				manifests, err := workv1alpha1.EncodeManifests(w.Objects)
				if err != nil {
					t.Fatal(err)
				}
				for i := range manifests {
					p, data, err := works.EncodeManifest(&manifests[i])
					if err != nil {
						t.Fatal(err)
					}
					want[path.Join(w.Cluster, p)] = string(data)
				}
			}
			if len(got) != len(want) {
				t.Errorf("wrote %d files, the work branch holds %d (and the marker)", len(got), len(want))
			}
			for p, data := range want {
				if got[p] != data {
					t.Errorf("%s differs from the work branch's file:\n%s\nwant\n%s", p, got[p], data)
				}
			}
			back, err := Read(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(back) != len(rendered) {
				t.Fatalf("read back %d clusters, wrote %d", len(back), len(rendered))
			}
			for i := range back {
				if back[i].Cluster != rendered[i].Cluster || len(back[i].Objects) != len(rendered[i].Objects) {
					t.Errorf("read back %s with %d objects, wrote %s with %d",
						back[i].Cluster, len(back[i].Objects), rendered[i].Cluster, len(rendered[i].Objects))
				}
			}
		})
	}
}
