package source

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// A controller pointed at another repository with the same --cache-dir
// used to keep fetching the first one's origin and record its commits.
func TestFollowerNeverReusesAnotherRepositorysClone(t *testing.T) {
	a, b := newHistory(t), newHistory(t)
	b.commit(t, "only in b", map[string]string{"fleet/b-only.yaml": "b: 1\n"})
	cache := filepath.Join(t.TempDir(), "source")
	ctx := context.Background()
	urlA, urlB := "file://"+filepath.ToSlash(a.dir), "file://"+filepath.ToSlash(b.dir)

	rev, err := NewFollower(FollowOptions{URL: urlA, Branch: "main", CacheDir: cache}).Fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := a.hashes[len(a.hashes)-1]; rev.Hash != want {
		t.Fatalf("first fetch: %s, want A's tip %s", rev.Hash, want)
	}
	rev, err = NewFollower(FollowOptions{URL: urlB, Branch: "main", CacheDir: cache}).Fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := b.hashes[len(b.hashes)-1]; rev.Hash != want {
		t.Errorf("after --repo changed: %s, want B's tip %s (A's is %s)", rev.Hash, want, a.hashes[len(a.hashes)-1])
	}
}

func TestCacheKeyIgnoresCredentialsOnly(t *testing.T) {
	base := CacheKey("https://git.example.com/org/fleet.git")
	if k := CacheKey("https://x-access-token:old@git.example.com/org/fleet.git"); k != base {
		t.Errorf("a token changes the key: %s vs %s", k, base)
	}
	if k := CacheKey("https://x-access-token:new@git.example.com/org/fleet.git?token=abc"); k != base {
		t.Errorf("a rotated token changes the key: %s vs %s", k, base)
	}
	if k := CacheKey("https://git.example.com/org/other.git"); k == base {
		t.Error("two repositories share a key")
	}
}

// A revision holding a file over the limit is refused before the blob is
// read into memory, naming the file.
func TestTreeRefusesFilesOverTheLimits(t *testing.T) {
	h := newHistory(t)
	h.commit(t, "big", map[string]string{"fleet/big.yaml": "x: " + strings.Repeat("y", 5000) + "\n"})
	repo, err := Open(context.Background(), h.dir)
	if err != nil {
		t.Fatal(err)
	}
	repo.SetLimits(Limits{MaxFileBytes: 4096})
	_, err = repo.Tree("main", "fleet", memFS{})
	if err == nil || !strings.Contains(err.Error(), "fleet/big.yaml: file is 5004 bytes, over the limit of 4096 bytes (--max-file-bytes)") {
		t.Errorf("err = %v", err)
	}
	repo.SetLimits(Limits{MaxTotalBytes: 100})
	if _, err = repo.Tree("main", "fleet", memFS{}); err == nil || !strings.Contains(err.Error(), "(--max-source-bytes)") {
		t.Errorf("err = %v", err)
	}
	repo.SetLimits(Limits{})
	if _, err = repo.Tree("main", "fleet", memFS{}); err != nil {
		t.Errorf("without limits: %v", err)
	}
}
