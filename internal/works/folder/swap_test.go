package folder

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRemoveStaleTrash: the trash folder of a render that died while
// deleting the render it replaced is removed once it is old, and left
// alone while it may still be another render's; nothing else with that
// prefix is touched.
func TestRemoveStaleTrash(t *testing.T) {
	parent := t.TempDir()
	stale, fresh := filepath.Join(parent, trashPrefix+"1"), filepath.Join(parent, trashPrefix+"2")
	mine := filepath.Join(parent, trashPrefix+"mine.txt") // a file of the user's with that prefix
	for _, d := range []string{stale, fresh} {
		if err := os.MkdirAll(filepath.Join(d, "render", "member1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "render", "member1", "x.yaml"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(mine, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	old := now.Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(mine, old, old); err != nil {
		t.Fatal(err)
	}
	if err := RemoveStaleTrash(parent, now); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale trash folder is still there: %v", err)
	}
	for _, keep := range []string{fresh, mine} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s: %v, want it kept", keep, err)
		}
	}
}
