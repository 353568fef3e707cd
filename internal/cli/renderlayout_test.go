package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/propagit/propagit/internal/works/folder"
)

// TestRenderClusterLayout renders every example both ways: each cluster's
// all.yaml holds, in order, exactly the bytes of the files the object
// layout writes for that cluster, each after a comment naming its path, and
// reads back (--previous) as the same objects.
func TestRenderClusterLayout(t *testing.T) {
	dirs, err := filepath.Glob("../../examples/*/fleet")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, fleet := range dirs {
		t.Run(filepath.Base(filepath.Dir(fleet)), func(t *testing.T) {
			base := t.TempDir()
			objects, clusters := filepath.Join(base, "objects"), filepath.Join(base, "clusters")
			runCLI(t, 0, "render", "--source", fleet, "--out", objects)
			runCLI(t, 0, "render", "--source", fleet, "--out", clusters, "--layout", "cluster")
			perObject, perCluster := readTree(t, objects), readTree(t, clusters)
			want := map[string][]string{} // cluster → its object files
			for rel := range perObject {
				if cluster, file, ok := strings.Cut(rel, "/"); ok {
					want[cluster] = append(want[cluster], file)
				}
			}
			for cluster, files := range want {
				stream, ok := perCluster[cluster+"/"+folder.ClusterFile]
				if !ok {
					t.Errorf("no %s/%s", cluster, folder.ClusterFile)
					continue
				}
				var got []string
				for _, doc := range strings.Split(stream, "---\n# ")[1:] {
					path, body, _ := strings.Cut(doc, "\n")
					got = append(got, path)
					if body != perObject[cluster+"/"+path] {
						t.Errorf("%s/%s: the document for %s differs from its file in the object layout:\n%s\nwant\n%s",
							cluster, folder.ClusterFile, path, body, perObject[cluster+"/"+path])
					}
				}
				slices.Sort(got)
				slices.Sort(files)
				if !slices.Equal(got, files) {
					t.Errorf("%s/%s holds %v, the object layout %v", cluster, folder.ClusterFile, got, files)
				}
			}
			if len(perCluster) != len(want)+1 { // and the marker
				t.Errorf("the cluster layout wrote %d files for %d clusters", len(perCluster), len(want))
			}
			// Either layout is an earlier render for --previous.
			a, err := folder.Read(objects)
			if err != nil {
				t.Fatal(err)
			}
			b, err := folder.Read(clusters)
			if err != nil {
				t.Fatal(err)
			}
			if len(a) != len(b) {
				t.Fatalf("read back %d clusters from the object layout, %d from the cluster layout", len(a), len(b))
			}
			for i := range a {
				if a[i].Cluster != b[i].Cluster || len(a[i].Objects) != len(b[i].Objects) {
					t.Errorf("read back %s with %d objects and %s with %d", a[i].Cluster, len(a[i].Objects), b[i].Cluster, len(b[i].Objects))
				}
			}
			// A render replaces an earlier one in the other layout.
			runCLI(t, 0, "render", "--source", fleet, "--out", clusters, "--previous", clusters)
			if got := readTree(t, clusters); len(got) != len(perObject) {
				t.Errorf("the object layout over a cluster layout left %d files, want %d", len(got), len(perObject))
			}
		})
	}
}

func TestRenderLayoutFlag(t *testing.T) {
	_, stderr := runCLI(t, 2, "render", "--source", "../../examples/quickstart/fleet", "--out", t.TempDir(), "--layout", "tree")
	if !strings.Contains(stderr, `--layout "tree": want one of object, cluster`) {
		t.Errorf("stderr = %q", stderr)
	}
	_, stderr = runCLI(t, 2, "render", "--source", "../../examples/quickstart/fleet", "--out", "-", "--layout", "cluster")
	if !strings.Contains(stderr, "does not apply to a stream") {
		t.Errorf("stderr = %q", stderr)
	}
}
