package load

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

const corpusDir = "testdata/corpus"

// corpusRow is one row of the corpus' EXPECT.md table.
type corpusRow struct {
	file, expect, why string
}

// readExpectations parses the table of EXPECT.md.
func readExpectations(t *testing.T) []corpusRow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, "EXPECT.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []corpusRow
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			t.Fatalf("malformed row %q", line)
		}
		rows = append(rows, corpusRow{
			file:   strings.Trim(strings.TrimSpace(cells[1]), "`"),
			expect: strings.TrimSpace(cells[2]),
			why:    strings.TrimSpace(cells[3]),
		})
	}
	return rows
}

func TestCorpusTableIsComplete(t *testing.T) {
	rows := readExpectations(t)
	counts := map[string]int{}
	for _, r := range rows {
		counts[r.expect]++
		if _, err := os.Stat(filepath.Join(corpusDir, r.file)); err != nil {
			t.Errorf("row names a missing file: %v", err)
		}
	}
	want := map[string]int{"accept": 101, "reject": 23, "unsupported": 4}
	if len(rows) != 128 {
		t.Errorf("parsed %d rows, want 128", len(rows))
	}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%s rows: got %d, want %d", k, counts[k], n)
		}
	}
	if len(counts) != len(want) {
		t.Errorf("unexpected expectations: %v", counts)
	}
}

// loadAlone loads one corpus file in an in-memory folder of its own.
func loadAlone(t *testing.T, file string) (*Set, []byte, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, file))
	if err != nil {
		t.Fatal(err)
	}
	fs := filesys.MakeFsInMemory()
	if err := fs.WriteFile("/src/"+file, data); err != nil {
		t.Fatal(err)
	}
	set, err := Load(fs, "/src")
	return set, data, err
}

func TestCorpus(t *testing.T) {
	for _, r := range readExpectations(t) {
		t.Run(r.file, func(t *testing.T) {
			set, data, err := loadAlone(t, r.file)
			switch r.expect {
			case "accept":
				if err != nil {
					t.Fatalf("want the file accepted (%s), got:\n%v", r.why, err)
				}
				for _, f := range set.Findings {
					if strings.Contains(f.Message, "unsupported") {
						t.Errorf("unexpected finding: %s", f)
					}
				}
			case "reject":
				assertRejected(t, r, err)
			case "unsupported":
				assertUnsupported(t, r, set, data, err)
			default:
				t.Fatalf("unknown expectation %q", r.expect)
			}
		})
	}
}

func assertRejected(t *testing.T, r corpusRow, err error) {
	t.Helper()
	var lerr *Error
	if !errors.As(err, &lerr) || len(lerr.Problems) == 0 {
		t.Fatalf("want a *load.Error (%s), got %v", r.why, err)
	}
	hasLine := false
	for _, p := range lerr.Problems {
		if p.Source.Path != r.file {
			t.Errorf("problem names %q, want %q: %s", p.Source.Path, r.file, p)
		}
		hasLine = hasLine || p.Source.Line > 0
	}
	if !hasLine || !strings.Contains(lerr.Error(), r.file+":") {
		t.Errorf("no problem names a line of %s:\n%v", r.file, err)
	}
	t.Logf("%s\n%v", r.why, err)
}

func assertUnsupported(t *testing.T, r corpusRow, set *Set, data []byte, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("want the file loaded with a finding (%s), got:\n%v", r.why, err)
	}
	kinds := karmadaKindsIn(t, data)
	if len(kinds) == 0 {
		t.Fatal("test bug: no unsupported Karmada kind found in the file")
	}
	for _, kind := range kinds {
		found := false
		for _, f := range set.Findings {
			found = found || (strings.Contains(f.Message, "unsupported Karmada kind") && strings.Contains(f.Message, "kind "+kind+"."))
		}
		if !found {
			t.Errorf("no finding names %s: %v", kind, set.Findings)
		}
		for _, tpl := range set.Templates {
			if tpl.Object.GetKind() == kind {
				t.Errorf("%s was loaded as a template", kind)
			}
		}
	}
}

// karmadaKindsIn lists the kinds of a file's documents whose apiVersion is
// in a Karmada group but not one of the four policy kinds or Cluster at
// v1alpha1.
func karmadaKindsIn(t *testing.T, data []byte) []string {
	t.Helper()
	supported := map[string]bool{
		"policy.karmada.io/v1alpha1 PropagationPolicy": true, "policy.karmada.io/v1alpha1 ClusterPropagationPolicy": true,
		"policy.karmada.io/v1alpha1 OverridePolicy": true, "policy.karmada.io/v1alpha1 ClusterOverridePolicy": true,
		"cluster.karmada.io/v1alpha1 Cluster": true,
	}
	var kinds []string
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if strings.Contains(doc.APIVersion, "karmada.io/") && !supported[doc.APIVersion+" "+doc.Kind] {
			kinds = append(kinds, doc.Kind)
		}
	}
	return kinds
}
