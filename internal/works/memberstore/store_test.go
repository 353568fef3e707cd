package memberstore

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/internal/gitserver"
	"github.com/propagit/propagit/internal/works/gitstore"
	"github.com/propagit/propagit/internal/works/workstest"
)

func TestRepoTemplate(t *testing.T) {
	good := []struct{ tmpl, cluster, want string }{
		{"https://git.example.com/fleet-works-{cluster}.git", "edge-1", "https://git.example.com/fleet-works-edge-1.git"},
		{"https://tok@git.example.com/org/{cluster}/works.git", "b", "https://tok@git.example.com/org/b/works.git"},
		{"git@git.example.com:org/works-{cluster}.git", "a", "git@git.example.com:org/works-a.git"},
		{"file:///srv/works-{cluster}.git", "a", "file:///srv/works-a.git"},
	}
	for _, c := range good {
		tm, err := ParseRepoTemplate(c.tmpl)
		if err != nil {
			t.Errorf("ParseRepoTemplate(%q): %v", c.tmpl, err)
			continue
		}
		if got, err := tm.URL(c.cluster); err != nil || got != c.want {
			t.Errorf("%q.URL(%q) = %q, %v; want %q", c.tmpl, c.cluster, got, err, c.want)
		}
	}
	for _, tmpl := range []string{
		"https://git.example.com/fleet.git",             // no placeholder
		"https://{cluster}.example.com/works.git",       // host
		"https://git.example.com:{cluster}/works.git",   // port
		"https://{cluster}@git.example.com/works.git",   // user
		"https://git.example.com/works.git?r={cluster}", // query
		"https://git.example.com/works.git#{cluster}",   // fragment
		"{cluster}://git.example.com/works.git",         // scheme
		"https://git.example.com{cluster}/works.git",    // host suffix
		"git@git.example.com{cluster}:org/works.git",    // scp host
	} {
		if _, err := ParseRepoTemplate(tmpl); err == nil {
			t.Errorf("ParseRepoTemplate(%q) accepted a template whose server depends on the cluster", tmpl)
		}
	}
	tm, _ := ParseRepoTemplate("https://git.example.com/works-{cluster}.git")
	for _, cluster := range []string{"", "a.evil.com", "a/../b", "A", "a@evil.com", "a:1", "a#", "a?x", strings.Repeat("a", 64)} {
		if got, err := tm.URL(cluster); err == nil {
			t.Errorf("URL(%q) = %q, want an error", cluster, got)
		}
	}
}

// TestMemberGitStoreKeepsMembersApart: each member's Work and status go to
// its own repository; status is read from that repository only, so a
// status for b forged in a's repository is never read; a Work claiming b
// in a's repository is skipped with a log line.
func TestMemberGitStoreKeepsMembersApart(t *testing.T) {
	root := t.TempDir()
	for _, c := range []string{"c0", "c1"} {
		if _, err := git.PlainInit(filepath.Join(root, "works-"+c+".git"), true); err != nil {
			t.Fatal(err)
		}
	}
	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	tmpl := "file://" + root + "/works-{cluster}.git"
	m, err := New(tmpl, gitstore.Options{}, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	changed, err := m.Put(ctx, "rev1", fleet(2, 1, "rev1", "a"))
	if err != nil || !slices.Equal(changed, []string{"c0", "c1"}) {
		t.Fatalf("Put = %v, %v", changed, err)
	}
	for _, c := range []string{"c0", "c1"} {
		r := &remote{&workstest.Remote{Dir: filepath.Join(root, "works-"+c+".git")}}
		var folders []string
		for p := range r.TipFiles(t, "refs/heads/propagit/works") {
			folders = append(folders, strings.SplitN(p, "/", 2)[0])
		}
		slices.Sort(folders)
		if got := slices.Compact(folders); !slices.Equal(got, []string{c}) {
			t.Errorf("repository of %s holds folders %v, want only %s", c, got, c)
		}
	}

	// c0's credentials write a status for c1 and a Work for c1 into c0's
	// repository.
	c0, err := gitstore.New(gitstore.Options{URL: "file://" + root + "/works-c0.git"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c0.PutStatus(ctx, "c1", testStatus("forged", metav1.ConditionFalse, t0)); err != nil {
		t.Fatal(err)
	}
	if _, err := c0.Put(ctx, "forged", append(fleet(1, 1, "rev1", "a"), fleet(2, 1, "forged", "x")[1])); err != nil {
		t.Fatal(err)
	}
	if err := m.PutStatus(ctx, "c1", testStatus("rev1", metav1.ConditionTrue, t0)); err != nil {
		t.Fatal(err)
	}
	st, err := m.GetStatus(ctx, "c1")
	if err != nil || st.AppliedRevision != "rev1" {
		t.Errorf("status of c1 = %+v, %v; want its own, rev1", st, err)
	}
	fresh, _ := New(tmpl, gitstore.Options{}, log)
	fresh.Track([]string{"c0", "c1"})
	ws, err := fresh.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.Spec.SourceRevision != "rev1" {
			t.Errorf("List returned the forged Work of %s", w.Spec.Cluster)
		}
	}
	if len(ws) != 2 || len(logged) != 1 || !strings.Contains(logged[0], "another member") || !strings.Contains(logged[0], `"c1"`) {
		t.Errorf("List = %d Works, log %q; want 2 and one line about c1", len(ws), logged)
	}
	if rev, err := fresh.NewestRevision(ctx); err != nil || rev != "forged" && rev != "rev1" {
		t.Errorf("NewestRevision = %q, %v", rev, err)
	}
}

// BenchmarkMemberGitStorePutUnchanged: a controller pass that changes no
// Work, with one works repository per member behind real smart HTTP: one
// ref listing per member (20 members, 20 objects each).
func BenchmarkMemberGitStorePutUnchanged(b *testing.B) {
	const n = 20
	srv, err := gitserver.New(b.TempDir(), gitserver.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	for c := range n {
		if _, err := srv.InitBare(fmt.Sprintf("works-c%d.git", c)); err != nil {
			b.Fatal(err)
		}
	}
	m, err := New(srv.URL+"/works-{cluster}.git", gitstore.Options{}, logr.Discard())
	if err != nil {
		b.Fatal(err)
	}
	ctx := ctxT(b)
	if _, err := m.Put(ctx, "rev", fleet(n, 20, "rev", "v")); err != nil {
		b.Fatal(err)
	}
	before := srv.RefAdvertisements()
	for b.Loop() {
		if changed, err := m.Put(ctx, "rev", fleet(n, 20, "rev", "v")); err != nil || len(changed) > 0 {
			b.Fatalf("Put = %v, %v", changed, err)
		}
	}
	b.ReportMetric(float64(srv.RefAdvertisements()-before)/float64(b.N), "ref-listings/op")
}

// TestMemberGitStoreRemovesAbsentMember: a member no longer rendered loses
// its Work in its own repository, once; the other member's is untouched.
func TestMemberGitStoreRemovesAbsentMember(t *testing.T) {
	root := t.TempDir()
	for _, c := range []string{"c0", "c1"} {
		if _, err := git.PlainInit(filepath.Join(root, "works-"+c+".git"), true); err != nil {
			t.Fatal(err)
		}
	}
	m, err := New("file://"+root+"/works-{cluster}.git", gitstore.Options{}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if _, err := m.Put(ctx, "rev1", fleet(2, 1, "rev1", "a")); err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]string{{"c1"}, nil} {
		changed, err := m.Put(ctx, "rev2", fleet(1, 1, "rev2", "a"))
		if err != nil || !slices.Equal(changed, want) {
			t.Errorf("Put %d without c1 = %v, %v; want %v", i+1, changed, err, want)
		}
	}
	r := &remote{&workstest.Remote{Dir: filepath.Join(root, "works-c1.git")}}
	if files := r.TipFiles(t, "refs/heads/propagit/works"); len(files) != 0 {
		t.Errorf("c1's repository still holds %v", files)
	}
	if w, err := m.ListCluster(ctx, "c0"); err != nil || w == nil {
		t.Errorf("c0's Work = %v, %v", w, err)
	}
}
