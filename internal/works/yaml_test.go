package works

import (
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// TestToYAMLMatchesJSONToYAML: marshalling an object directly gives the
// bytes of yaml.JSONToYAML of its JSON (what yaml.Marshal gives, and render and the work branch wrote before), for every
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
