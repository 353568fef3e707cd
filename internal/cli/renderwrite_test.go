package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/e2e/fleet"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// TestRenderOutFleet renders a generated fleet with --out: every cluster
// holds what the model says, the output is the same byte for byte whatever
// the number of workers, and clusters that share a rendering (same region
// and tier) get identical files.
func TestRenderOutFleet(t *testing.T) {
	m, err := fleet.New(40, 12)
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(t.TempDir(), "repo")
	if err := m.WriteRepo(filesys.MakeFsOnDisk(), repo); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	runCLI(t, 0, "render", "--source", repo, "--out", out)
	parallel := readTree(t, out)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	runCLI(t, 0, "render", "--source", repo, "--out", out)
	if serial := readTree(t, out); len(serial) != len(parallel) {
		t.Fatalf("%d files with one worker, %d with several", len(serial), len(parallel))
	} else {
		for f, data := range serial {
			if parallel[f] != data {
				t.Fatalf("%s differs between one worker and several", f)
			}
		}
	}
	for c := range m.Clusters {
		var objs []map[string]any
		dir := filepath.Join(out, m.Clusters[c].Name)
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var obj map[string]any
			if err := yaml.Unmarshal(data, &obj); err != nil {
				return err
			}
			objs = append(objs, obj)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Check(c, objs); err != nil {
			t.Fatal(err)
		}
	}
	// member-000 and member-004 are both in region r0, so a ConfigMap
	// placed everywhere renders alike for them.
	a := parallel["member-000/team-0/configmap.core_app-0007.yaml"]
	b := parallel["member-004/team-0/configmap.core_app-0007.yaml"]
	if a == "" || a != b {
		t.Errorf("a ConfigMap rendered alike for two clusters differs:\n%s\n---\n%s", a, b)
	}
}

// TestToYAMLMatchesJSONToYAML: marshalling an object directly gives the
// bytes of yaml.JSONToYAML of its JSON (what render wrote before), for every
// object of the examples' sources and renders, and for values where the two
// could part (those go through JSON).
func TestToYAMLMatchesJSONToYAML(t *testing.T) {
	var values []map[string]any
	dirs, err := filepath.Glob("../../examples/*/fleet")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			t.Fatal(err)
		}
		set, err := load.Load(filesys.MakeFsOnDisk(), abs)
		if err != nil {
			t.Fatal(err)
		}
		for _, tm := range set.Templates {
			values = append(values, tm.Object.Object)
		}
		for _, w := range render.Render(render.Input{Set: set, Options: render.DefaultOptions()}).Works {
			for _, o := range w.Objects {
				values = append(values, o.Object)
			}
		}
	}
	tricky := map[string]any{
		"strings": []any{"", "true", "no", "~", "null", "1", "1.5", "0x10", "1e3", "-", "a: b", "#x", "- x", "multi\nline\n", "trailing ", " lead",
			"tab\there", "quote'\"", "ünïcödé", "emoji 🚀", "\u2028", "<&>", "=", "<<", "2024-01-01", "12:30", "@x", "`x", "%x", "*x", "&x", "!x", "|", ">"},
		"ints":   []any{int64(0), int64(-1), int64(9007199254740993), int64(-9223372036854775808), 7},
		"keys":   map[string]any{"a10": 1, "a9": 2, "A": 3, "1": 4, "true": 5, "": 6, "b c": 7, "-x": 8},
		"empty":  map[string]any{"m": map[string]any{}, "l": []any{}, "n": nil},
		"nested": []any{[]any{map[string]any{"x": []any{nil, true, false}}}},
	}
	fallbacks := []map[string]any{
		{"float": 1.5}, {"whole": float64(2)}, {"million": float64(1e6)}, {"big": float64(1e19)}, {"negzero": math.Copysign(0, -1)},
		{"nilmap": map[string]any(nil)}, {"nillist": []any(nil)}, {"bytes": "\xff\xfe"}, {"uint": uint64(1)},
	}
	direct := 0
	for _, v := range append(append(values, tricky), fallbacks...) {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := yaml.JSONToYAML(j)
		if err != nil {
			t.Fatal(err)
		}
		got, err := toYAML(v, func() ([]byte, error) { return j, nil })
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		if string(got) != string(want) {
			t.Errorf("toYAML(%v) =\n%s\nwant (JSONToYAML)\n%s", v, got, want)
		}
		if plainJSON(v) {
			direct++
		}
	}
	for _, v := range fallbacks {
		if plainJSON(v) {
			t.Errorf("%v is marshalled directly, want through JSON", v)
		}
	}
	if direct < len(values) {
		t.Errorf("%d of %d example objects and the tricky values marshalled directly, want all", direct, len(values)+1)
	}
}

// TestRenderRemovesStaleTrash: the trash folder of a render that died while
// deleting the render it replaced is removed by a later render once it is
// old, and left alone while it may still be another render's.
func TestRenderRemovesStaleTrash(t *testing.T) {
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
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(mine, old, old); err != nil {
		t.Fatal(err)
	}
	runCLI(t, 0, "render", "--source", "../../examples/quickstart/fleet", "--out", filepath.Join(parent, "out"))
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale trash folder is still there: %v", err)
	}
	for _, keep := range []string{fresh, mine, filepath.Join(parent, "out", renderMarker)} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s: %v, want it kept", keep, err)
		}
	}
}
