package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/e2e/fleet"
)

// TestRenderOutFleet renders a generated fleet with --out: every cluster
// holds what the model says, the output is the same byte for byte whatever
// the number of workers, and clusters that share a rendering (same region
// and tier) get identical files.
func TestRenderOutFleet(t *testing.T) {
	m, err := fleet.New(40, 12)
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(t.TempDir(), "repo")
	if err := m.WriteRepo(filesys.MakeFsOnDisk(), repo); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	runCLI(t, 0, "render", "--source", repo, "--out", out)
	parallel := readTree(t, out)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	runCLI(t, 0, "render", "--source", repo, "--out", out)
	if serial := readTree(t, out); len(serial) != len(parallel) {
		t.Fatalf("%d files with one worker, %d with several", len(serial), len(parallel))
	} else {
		for f, data := range serial {
			if parallel[f] != data {
				t.Fatalf("%s differs between one worker and several", f)
			}
		}
	}
	for c := range m.Clusters {
		var objs []map[string]any
		dir := filepath.Join(out, m.Clusters[c].Name)
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var obj map[string]any
			if err := yaml.Unmarshal(data, &obj); err != nil {
				return err
			}
			objs = append(objs, obj)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Check(c, objs); err != nil {
			t.Fatal(err)
		}
	}
	// member-000 and member-004 are both in region r0, so a ConfigMap
	// placed everywhere renders alike for them.
	a := parallel["member-000/team-0/configmap.core_app-0007.yaml"]
	b := parallel["member-004/team-0/configmap.core_app-0007.yaml"]
	if a == "" || a != b {
		t.Errorf("a ConfigMap rendered alike for two clusters differs:\n%s\n---\n%s", a, b)
	}
}
