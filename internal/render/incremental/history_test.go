package incremental_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/e2e/fleet"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/render/incremental"
)

// TestHistoryMatchesPreviousFromWorks renders a generated fleet through a
// sequence of commits, as the controller does (load cache, memo, History),
// and checks at each step that History gives exactly what
// PreviousFromWorks gives, that an unchanged template keeps its history
// and a changed one gets a new one. A cluster whose Work a prune guard
// held (its objects of the step before) is covered too.
func TestHistoryMatchesPreviousFromWorks(t *testing.T) {
	m, err := fleet.New(60, 12)
	if err != nil {
		t.Fatal(err)
	}
	fs := filesys.MakeFsInMemory()
	if err := m.WriteRepo(fs, "/repo"); err != nil {
		t.Fatal(err)
	}
	tm := m.Templates[0]
	file := fleet.TemplateFile("/repo", tm)
	original, err := fs.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cache, memo, h := load.NewCache(), incremental.NewMemo(), &incremental.History{}
	var prev *render.Previous
	var lastWorks []render.Work
	steps := []struct {
		name   string
		change func()
		held   bool // the first cluster keeps its Work of the step before
	}{
		{"first", func() {}, false},
		{"with history", func() {}, false},
		{"unchanged", func() {}, false},
		{"one template changed", func() {
			changed := strings.Replace(string(original), fmt.Sprintf("replicas: %d", tm.Replicas), fmt.Sprintf("replicas: %d", tm.Replicas+3), 1)
			must(t, fs.WriteFile(file, []byte(changed)))
		}, false},
		{"a cluster's Work held", func() { must(t, fs.WriteFile(file, original)) }, true},
		{"template removed", func() { must(t, fs.RemoveAll(file)) }, false},
		{"template back", func() { must(t, fs.WriteFile(file, original)) }, false},
	}
	for _, step := range steps {
		step.change()
		set, err := cache.Load(fs, "/repo")
		if err != nil {
			t.Fatal(err)
		}
		res := memo.Render(render.Input{Set: set, Options: render.DefaultOptions(), Previous: prev})
		works := res.Works
		if step.held {
			works = append([]render.Work{lastWorks[0]}, works[1:]...)
		}
		got, want := h.Next(works), render.PreviousFromWorks(works)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: History differs from PreviousFromWorks", step.name)
		}
		if step.name == "unchanged" || step.name == "one template changed" {
			kept, rebuilt := 0, 0
			for key, pt := range got.Templates {
				if prev.Templates[key] == pt {
					kept++
				} else {
					rebuilt++
				}
			}
			if step.name == "unchanged" && rebuilt != 0 {
				t.Errorf("%s: %d templates' history rebuilt, want none", step.name, rebuilt)
			}
			if step.name == "one template changed" && (rebuilt != 1 || kept == 0) {
				t.Errorf("%s: %d templates' history rebuilt and %d kept, want 1 rebuilt", step.name, rebuilt, kept)
			}
		}
		prev, lastWorks = got, works
	}
}

// TestHistoryOfExamples: the examples rendered three times with their
// history (render's TestHistoryWithEvictions reads a failover's).
func TestHistoryOfExamples(t *testing.T) {
	dirs, err := filepath.Glob("../../../examples/*/fleet")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, d := range dirs {
		abs, _ := filepath.Abs(d)
		set, err := load.Load(filesys.MakeFsOnDisk(), abs)
		if err != nil {
			t.Fatal(err)
		}
		h := &incremental.History{}
		var prev *render.Previous
		for i := range 3 {
			res := render.Render(render.Input{Set: set, Options: render.DefaultOptions(), Previous: prev})
			got, want := h.Next(res.Works), render.PreviousFromWorks(res.Works)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, render %d: History differs from PreviousFromWorks", d, i)
			}
			prev = got
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
