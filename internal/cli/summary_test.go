package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderSummary: --summary writes no file and prints per cluster the
// object count and Work digest, plus one render digest; a change to one
// cluster's object changes that cluster's digest and the render digest,
// and nothing else.
func TestRenderSummary(t *testing.T) {
	src := filepath.Join(t.TempDir(), "fleet")
	copyTree(t, "../../examples/quickstart/fleet", src)
	before, _ := runCLI(t, 0, "render", "--source", src, "--summary")
	again, _ := runCLI(t, 0, "render", "--source", src, "--summary")
	if before != again {
		t.Fatalf("two summaries of one source differ:\n%s\n%s", before, again)
	}
	if !strings.Contains(before, "6 objects for 2 clusters; render digest ") {
		t.Fatalf("summary:\n%s", before)
	}
	entries, err := os.ReadDir(filepath.Dir(src))
	if err != nil || len(entries) != 1 {
		t.Fatalf("--summary wrote files: %v %v", entries, err)
	}
	rows := func(s string) map[string]string {
		out := map[string]string{}
		for _, l := range strings.Split(s, "\n") {
			if f := strings.Fields(l); len(f) == 3 && strings.HasPrefix(f[0], "member") {
				out[f[0]] = f[2]
			}
		}
		return out
	}
	// member2's override changes: member2's digest and the render digest
	// change, member1's does not.
	override := filepath.Join(src, "policies", "nginx-override.yaml")
	data, err := os.ReadFile(override)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(override, []byte(strings.Replace(string(data), "value: 3", "value: 4", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	after, _ := runCLI(t, 0, "render", "--source", src, "--summary")
	b, a := rows(before), rows(after)
	if len(b) != 2 || b["member1"] != a["member1"] || b["member2"] == a["member2"] {
		t.Errorf("digests before %v, after %v: want member2's alone to change", b, a)
	}
	last := func(s string) string { return s[strings.LastIndex(strings.TrimSpace(s), " ")+1:] }
	if last(before) == last(after) {
		t.Error("the render digest did not change")
	}
	runCLI(t, 2, "render", "--source", src, "--summary", "--out", filepath.Join(t.TempDir(), "o"))
}

// copyTree copies the files under from to to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
