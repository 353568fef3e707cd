//go:build unix

package folder

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSwapDoesNotFollowASymlinkedOut: if out became a symlink after it was
// checked, the swap removes the link, never what it points to.
func TestSwapDoesNotFollowASymlinkedOut(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine")
	if err := os.MkdirAll(filepath.Join(mine, "member1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "member1", "keep"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, tmp := filepath.Join(dir, "out"), filepath.Join(dir, "tmp")
	if err := os.Symlink(mine, out); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := swap(tmp, out); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(mine, "member1", "keep")); err != nil || string(b) != "mine\n" {
		t.Errorf("the symlink's target was changed: %q, %v", b, err)
	}
	if fi, err := os.Lstat(out); err != nil || !fi.IsDir() {
		t.Errorf("out is not the new render: %v, %v", fi, err)
	}
}
