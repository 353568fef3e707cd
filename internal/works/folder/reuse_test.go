//go:build unix

package folder

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/render"
)

// TestWriteReusesOnlyWhatItWrote: a re-render links the earlier
// render's file when it holds exactly the bytes due, and writes anew
// anything it cannot vouch for: a file edited since, a symlink (even to the
// right bytes), a file with another link outside the render, another mode.
// Afterwards every file is a regular file with one link and the files
// outside the render are untouched.
func TestWriteReusesOnlyWhatItWrote(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	var objs []*unstructured.Unstructured
	for _, name := range []string{"same", "edited", "symlink", "hardlink", "mode", "changed"} {
		objs = append(objs, configMap("ConfigMap", "default", name))
	}
	works := []render.Work{{Cluster: "member1", Objects: objs}}
	if err := Write(out, works, LayoutObject); err != nil {
		t.Fatal(err)
	}
	file := func(name string) string {
		return filepath.Join(out, "member1", "default", "configmap.core_"+name+".yaml")
	}
	want := map[string][]byte{}
	for _, name := range []string{"same", "edited", "symlink", "hardlink", "mode"} {
		b, err := os.ReadFile(file(name))
		if err != nil {
			t.Fatal(err)
		}
		want[name] = b
	}
	before, err := os.Stat(file("same"))
	if err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(file("edited"), []byte(strings.Replace(string(want["edited"]), "edited", "EDITED", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "outside.yaml")
	if err := os.WriteFile(outside, want["symlink"], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(file("symlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, file("symlink")); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(dir, "shared.yaml")
	if err := os.Link(file("hardlink"), shared); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file("mode"), 0o600); err != nil {
		t.Fatal(err)
	}
	objs[5] = configMap("ConfigMap", "default", "changed")
	objs[5].SetLabels(map[string]string{"new": "label"})

	if err := Write(out, works, LayoutObject); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(file("same")); err != nil || !os.SameFile(before, after) {
		t.Errorf("the unchanged file was written again, not linked (%v)", err)
	}
	for name, b := range want {
		fi, err := os.Lstat(file(name))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(file(name))
		if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 || fi.Sys().(*syscall.Stat_t).Nlink != 1 || string(got) != string(b) {
			t.Errorf("%s: mode %v, %d links, content %q; want a regular 0644 file with one link holding %q", name, fi.Mode(), fi.Sys().(*syscall.Stat_t).Nlink, got, b)
		}
	}
	if got, _ := os.ReadFile(file("changed")); !strings.Contains(string(got), "new: label") {
		t.Errorf("the changed object was not written again:\n%s", got)
	}
	for f, b := range map[string][]byte{outside: want["symlink"], shared: want["hardlink"]} {
		if got, err := os.ReadFile(f); err != nil || string(got) != string(b) {
			t.Errorf("%s was changed: %q, %v", f, got, err)
		}
	}
	if fa, _ := os.Stat(shared); fa != nil {
		if fb, _ := os.Stat(file("hardlink")); fb != nil && os.SameFile(fa, fb) {
			t.Error("the render shares a file with a hard link outside it")
		}
	}
}
