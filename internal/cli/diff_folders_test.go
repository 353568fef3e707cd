package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"

	"github.com/propagit/propagit/internal/diff"
)

func parseReport(t *testing.T, out string) diff.Report {
	t.Helper()
	var r diff.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return r
}

// changes lists "cluster change Kind/name" for every object of r.
func changes(r diff.Report) []string {
	var out []string
	for _, c := range r.Clusters {
		for _, o := range c.Objects {
			out = append(out, c.Name+" "+string(o.Change)+" "+o.Kind+"/"+o.Name)
		}
	}
	return out
}

// A pull request that adds a fleet folder shows everything as added, one
// that removes it everything as removed; a folder on neither side is an
// error.
func TestDiffNewOrRemovedFleetFolder(t *testing.T) {
	dir := fleetRepo(t)
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := &committer{t: t, dir: dir, repo: repo, n: 20}
	c.commit("second-fleet", map[string]string{
		"fleet2/clusters/member1.yaml": sprintf(fleetCluster, "member1"),
		"fleet2/namespaces/demo.yaml":  fleetNamespace,
		"fleet2/apps/worker.yaml":      fleetWorker,
		"fleet2/policies/worker.yaml":  sprintf(fleetWorkerPolicy, "member1"),
	})
	args := []string{"diff", dir + "//fleet2", "-o", "json"}
	out, stderr := runCLI(t, 0, append(args, "--base", "secret-changed", "--head", "second-fleet")...)
	want := []string{"member1 added Namespace/demo", "member1 added Deployment/worker"}
	if got := changes(parseReport(t, out)); !slices.Equal(got, want) {
		t.Errorf("new folder: changes %v, want %v", got, want)
	}
	if !strings.Contains(stderr, `note: base (`) || !strings.Contains(stderr, `has no folder "fleet2": everything is added`) {
		t.Errorf("new folder: no note on stderr:\n%s", stderr)
	}

	out, stderr = runCLI(t, 0, append(args, "--base", "second-fleet", "--head", "secret-changed")...)
	r := parseReport(t, out)
	want = []string{"member1 removed Namespace/demo", "member1 removed Deployment/worker"}
	if got := changes(r); !slices.Equal(got, want) || len(r.Deletions) != 2 {
		t.Errorf("removed folder: changes %v (deletions %v), want %v", got, r.Deletions, want)
	}
	if !strings.Contains(stderr, `everything is removed`) {
		t.Errorf("removed folder: no note on stderr:\n%s", stderr)
	}

	// Uncommitted, in the working tree: the default --head.
	if err := os.MkdirAll(filepath.Join(dir, "fleet3"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "fleet3/all.yaml"), sprintf(fleetCluster, "member1")+"---\n"+fleetNamespace)
	out, _ = runCLI(t, 0, "diff", dir+"//fleet3", "-o", "json")
	if got := changes(parseReport(t, out)); !slices.Equal(got, []string{"member1 added Namespace/demo"}) {
		t.Errorf("new folder in the working tree: changes %v", got)
	}

	_, stderr = runCLI(t, 2, "diff", dir+"//nowhere", "--base", "base", "--head", "second-fleet")
	if !strings.Contains(stderr, `nothing to compare: base (`) || !strings.Contains(stderr, `) has no folder "nowhere", and head (`) {
		t.Errorf("folder on neither side: %s", stderr)
	}
}

// copyFleet copies examples/quickstart/fleet to dir, applying edit to
// each file's content.
func copyFleet(t *testing.T, dir string, edit func(string) string) {
	t.Helper()
	const src = "../../examples/quickstart/fleet"
	for rel, content := range readTree(t, src) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, edit(content))
	}
}

// --base-dir and --head-dir compare two folders on disk, no Git involved;
// --cluster keeps the named clusters.
func TestDiffFolders(t *testing.T) {
	base, head := filepath.Join(t.TempDir(), "base"), filepath.Join(t.TempDir(), "head")
	copyFleet(t, base, func(s string) string { return s })
	copyFleet(t, head, func(s string) string { return strings.ReplaceAll(s, "nginx:1.27.3", "nginx:1.27.4") })
	out, _ := runCLI(t, 1, "diff", "--base-dir", base, "--head-dir", head, "-o", "json", "--exit-code")
	r := parseReport(t, out)
	if got := changes(r); !slices.Equal(got, []string{"member1 changed Deployment/nginx", "member2 changed Deployment/nginx"}) {
		t.Errorf("changes %v", got)
	}
	if r.Base.Name != base || r.Head.Name != head {
		t.Errorf("revisions %+v → %+v, want the folders", r.Base, r.Head)
	}
	if d := r.Clusters[0].Objects[0].Diff; !strings.Contains(d, "-      - image: nginx:1.27.3\n+      - image: nginx:1.27.4\n") {
		t.Errorf("no image hunk:\n%s", d)
	}

	out, _ = runCLI(t, 0, "diff", "--base-dir", base, "--head-dir", head, "-o", "json", "--cluster", "member2")
	if got := changes(parseReport(t, out)); !slices.Equal(got, []string{"member2 changed Deployment/nginx"}) {
		t.Errorf("--cluster member2: changes %v", got)
	}
	out, _ = runCLI(t, 0, "diff", "--base-dir", base, "--head-dir", base, "--cluster", "member1,member2", "-o", "json")
	if r := parseReport(t, out); r.Differs || r.UnchangedClusters != 2 {
		t.Errorf("same folder twice: differs %v, unchanged %d; want no difference on 2 clusters", r.Differs, r.UnchangedClusters)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--base-dir", base}, "--base-dir and --head-dir go together"},
		{[]string{"--base-dir", base, "--head-dir", head, "--base", "main"}, "--base reads Git"},
		{[]string{"--base-dir", base, "--head-dir", head, "--cluster", "member7"}, "--cluster member7: no Cluster of that name"},
		{[]string{"--base-dir", filepath.Join(base, "nope"), "--head-dir", filepath.Join(head, "nope")}, "does not exist, and --head-dir"},
	} {
		_, stderr := runCLI(t, 2, append([]string{"diff"}, tc.args...)...)
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("diff %v: stderr %q, want %q", tc.args, stderr, tc.want)
		}
	}
}

// --cluster on a Git diff: an object moving from a listed cluster to
// another is still a move, not a deletion.
func TestDiffClusterFilterKeepsMoves(t *testing.T) {
	dir := fleetRepo(t)
	out, _ := runCLI(t, 0, "diff", dir+"//fleet", "--base", "base", "--head", "policy-move", "-o", "json", "--cluster", "member1")
	r := parseReport(t, out)
	for _, c := range r.Clusters {
		if c.Name != "member1" {
			t.Errorf("cluster %s reported", c.Name)
		}
	}
	if len(r.Moves) != 1 || r.Moves[0].From != "member1" || len(r.Deletions) != 0 {
		t.Errorf("moves %+v, deletions %+v: want the worker's move and no deletion", r.Moves, r.Deletions)
	}
}

// A one-line image bump on a fleet of 1,000 clusters, compared folder to
// folder: the markdown comment fits GitHub's limit, uncut, with the hunk
// shown once for all the clusters.
func TestDiffFoldersThousandClustersFitOneComment(t *testing.T) {
	var clusters strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&clusters, "---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: c%04d}\nspec: {syncMode: Push}\n", i)
	}
	const policy = "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: worker, namespace: demo}\n" +
		"spec:\n  resourceSelectors:\n  - {apiVersion: apps/v1, kind: Deployment, name: worker}\n  placement: {}\n"
	dirs := map[string]string{"base": "worker:2.0.0", "head": "worker:2.0.1"}
	for side, image := range dirs {
		dir := filepath.Join(t.TempDir(), side)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "clusters.yaml"), clusters.String())
		writeFile(t, filepath.Join(dir, "app.yaml"), fleetNamespace+"---\n"+strings.Replace(fleetWorker, "worker:2.0.0", image, 1)+"---\n"+policy)
		dirs[side] = dir
	}
	start := time.Now()
	md, _ := runCLI(t, 0, "diff", "--base-dir", dirs["base"], "--head-dir", dirs["head"], "-o", "markdown")
	t.Logf("1,000-cluster diff folder to folder: %s, %d characters", time.Since(start).Round(time.Millisecond), len(md))
	if len(md) > diff.MarkdownLimit || strings.Contains(md, "cut here") {
		t.Fatalf("markdown is %d characters or was cut", len(md))
	}
	for _, s := range []string{"same change on 1000 clusters", "-      - image: registry.example.com/team/worker:2.0.0\n+      - image: registry.example.com/team/worker:2.0.1\n"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md[:min(len(md), 3000)])
		}
	}
	if n := strings.Count(md, "worker:2.0.1"); n != 1 {
		t.Errorf("the hunk appears %d times, want once", n)
	}
}
