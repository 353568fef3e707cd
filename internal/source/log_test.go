package source

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestFollowerLog lists the branch's commits newest first, with subject,
// author and time, up to the number asked, and only after a fetch.
func TestFollowerLog(t *testing.T) {
	h := newHistory(t)
	f := NewFollower(FollowOptions{URL: "file://" + filepath.ToSlash(h.dir), Branch: "main"})
	if _, err := f.Log(10); err == nil {
		t.Error("Log before the first fetch: want an error")
	}
	if _, err := f.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := f.Log(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Hash != h.hashes[2] || got[1].Hash != h.hashes[1] {
		t.Fatalf("Log(2) = %+v, want the commits %s and %s", got, h.hashes[2], h.hashes[1])
	}
	want := Commit{Hash: h.hashes[2], Subject: "three", Author: "Test", Time: time.Date(2026, 1, 2, 3, 6, 5, 0, time.UTC)}
	if got[0].Subject != want.Subject || got[0].Author != want.Author || !got[0].Time.Equal(want.Time) {
		t.Errorf("newest commit %+v, want %+v", got[0], want)
	}
	if all, err := f.Log(100); err != nil || len(all) != 3 {
		t.Errorf("Log(100) = %d commits (%v), want the 3 of the branch", len(all), err)
	}
}
