package cli

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files and example outputs")

// TestExamples renders every examples/<name>/fleet and compares the result
// with the checked-in examples/<name>/rendered folder.
func TestExamples(t *testing.T) {
	dirs, err := filepath.Glob("../../examples/*/fleet")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no examples found")
	}
	for _, fleet := range dirs {
		name := filepath.Base(filepath.Dir(fleet))
		t.Run(name, func(t *testing.T) {
			want := filepath.Join(filepath.Dir(fleet), "rendered")
			out := filepath.Join(t.TempDir(), "rendered")
			if *update {
				out = want
			}
			runCLI(t, 0, "render", "--source", fleet, "--out", out)
			if *update {
				return
			}
			if diff := cmp.Diff(readTree(t, want), readTree(t, out)); diff != "" {
				t.Errorf("render of %s differs from %s (-want +got); run go test ./internal/cli -update and review:\n%s", fleet, want, diff)
			}
		})
	}
}

// runCLI runs the root command with args and checks its exit code.
func runCLI(t *testing.T, wantCode int, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewRootCommand(&out, &errOut)
	cmd.SetArgs(args)
	code := 0
	if err := cmd.Execute(); err != nil {
		code = 2
		if ee, ok := err.(*ExitError); ok {
			code = ee.Code
		}
		errOut.WriteString("error: " + err.Error() + "\n")
	}
	if code != wantCode {
		t.Fatalf("propagit %v exited %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, wantCode, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

// readTree maps every file under dir (relative, slash-separated) to its content.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// golden compares got with testdata/<name>, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}
