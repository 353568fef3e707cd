package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMemoryLimitIsNinetyPercentOfTheCgroupLimit(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]int64{"1073741824\n": 966367641, "max\n": 0, "": 0} {
		file := filepath.Join(dir, "memory.max")
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, ok := memoryLimit(file)
		if got != want || ok != (want > 0) {
			t.Errorf("memoryLimit(%q) = %d, %v; want %d", content, got, ok, want)
		}
	}
	if _, ok := memoryLimit(filepath.Join(dir, "missing")); ok {
		t.Error("a missing file gave a limit")
	}
}
