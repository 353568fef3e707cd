package load

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// aliasBomb is a small document whose aliases expand to width^depth
// scalars.
func aliasBomb(width, depth int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  l0: &l0 x\n")
	for d := 1; d <= depth; d++ {
		fmt.Fprintf(&b, "  l%d: &l%d [", d, d)
		for i := range width {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", d-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func problemsWith(t *testing.T, opts Options, files map[string]string) []string {
	t.Helper()
	set, err := LoadWith(memFS(t, files), "/src", opts)
	var lerr *Error
	if !errors.As(err, &lerr) || set != nil {
		t.Fatalf("want a *load.Error and no Set, got %v, %v", set, err)
	}
	var out []string
	for _, p := range lerr.Problems {
		out = append(out, p.String())
	}
	return out
}

// An alias bomb listed in a kustomization was expanded by kustomize (GBs)
// before anything counted it. It is now refused when krusty reads the file,
// at the file and line, after little allocation.
func TestLoadRefusesAnAliasBombInsideAKustomization(t *testing.T) {
	bomb := aliasBomb(11, 6) // 1.77M nodes, over the 1Mi per document
	if len(bomb) > 1024 {
		t.Fatalf("the bomb is %d bytes", len(bomb))
	}
	files := map[string]string{
		"app/kustomization.yaml": "resources:\n- bomb.yaml\n",
		"app/bomb.yaml":          bomb,
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := problemsOf(t, files)
	runtime.ReadMemStats(&after)
	want := []string{"app/bomb.yaml:7: document too large: more than 1048576 nodes after expanding aliases"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Errorf("the load allocated %d MiB: the bomb was expanded", alloc>>20)
	}
}

// The node budget is per source: many documents each under the
// per-document budget add up.
func TestLoadCountsNodesAcrossTheSource(t *testing.T) {
	files := map[string]string{}
	for i := range 8 {
		files[fmt.Sprintf("f%d.yaml", i)] = strings.Replace(aliasBomb(10, 4), "name: bomb", fmt.Sprintf("name: bomb%d", i), 1)
	}
	opts := Options{MaxNodes: 50_000}
	got := problemsWith(t, opts, files)
	want := []string{"f2.yaml:7: the source expands to more than 50000 YAML nodes after aliases (--max-yaml-nodes)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if _, err := LoadWith(memFS(t, files), "/src", Options{MaxNodes: 250_000}); err != nil {
		t.Errorf("under the budget: %v", err)
	}

	// Through kustomize, inputs count too.
	kfiles := map[string]string{"app/kustomization.yaml": "resources:\n"}
	for name, doc := range files {
		kfiles["app/"+name] = doc
		kfiles["app/kustomization.yaml"] += "- " + name + "\n"
	}
	got = problemsWith(t, opts, kfiles)
	if len(got) != 1 || !strings.HasSuffix(got[0], "(--max-yaml-nodes)") || !strings.HasPrefix(got[0], "app/f") {
		t.Errorf("problems = %q, want one naming an input of the kustomization", got)
	}
}

func TestLoadRefusesAFileOverTheSizeLimit(t *testing.T) {
	big := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  a: " + strings.Repeat("x", 2000) + "\n"
	opts := Options{MaxFileBytes: 1024}
	want := fmt.Sprintf("big.yaml: file is %d bytes, over the limit of 1024 bytes (--max-file-bytes)", len(big))
	if diff := cmp.Diff([]string{want}, problemsWith(t, opts, map[string]string{"big.yaml": big, "a.yaml": deployment})); diff != "" {
		t.Errorf("plain file (-want +got):\n%s", diff)
	}
	got := problemsWith(t, opts, map[string]string{"k/kustomization.yaml": "resources: [big.yaml]\n", "k/big.yaml": big})
	if diff := cmp.Diff([]string{"k/" + want}, got); diff != "" {
		t.Errorf("kustomization input (-want +got):\n%s", diff)
	}
}

func TestLoadRefusesASourceOverTheTotalLimit(t *testing.T) {
	files := map[string]string{}
	for i := range 5 {
		files[fmt.Sprintf("f%d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\ndata:\n  a: %s\n", i, strings.Repeat("x", 500))
	}
	got := problemsWith(t, Options{MaxSourceBytes: 2000}, files)
	want := []string{"f3.yaml: the source is over 2000 bytes in total (--max-source-bytes); reading stopped at this file"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestLoadRefusesTooManyDocuments(t *testing.T) {
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\n---\n"
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, doc, i)
	}
	got := problemsWith(t, Options{MaxDocuments: 25}, map[string]string{"a.yaml": b.String()})
	want := []string{"a.yaml:126: the source holds more than 25 YAML documents (--max-documents)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestLoadStopsAtItsDeadline(t *testing.T) {
	got := problemsWith(t, Options{Timeout: time.Nanosecond}, map[string]string{"a.yaml": deployment})
	want := []string{"a.yaml: loading took longer than 1ns (--load-timeout); it stopped at this file"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// A Cache charges the files it reuses, and a filesystem from WithOptions
// carries its limits into Cache.Load (the controller's path).
func TestCacheChargesReusedFiles(t *testing.T) {
	files := map[string]string{}
	for i := range 4 {
		files[fmt.Sprintf("f%d.yaml", i)] = strings.Replace(aliasBomb(10, 3), "name: bomb", fmt.Sprintf("name: bomb%d", i), 1)
	}
	c := NewCache()
	fs := memFS(t, files)
	if _, err := c.Load(WithOptions(fs, Options{MaxNodes: 10_000}), "/src"); err != nil {
		t.Fatalf("first load: %v", err)
	}
	_, err := c.Load(WithOptions(fs, Options{MaxNodes: 3000}), "/src")
	if err == nil || !strings.Contains(err.Error(), "(--max-yaml-nodes)") {
		t.Fatalf("second load, every file cached: err = %v, want the node limit", err)
	}
	if c.Parsed != 0 {
		t.Errorf("parsed %d files, want 0 (all cached)", c.Parsed)
	}
}
