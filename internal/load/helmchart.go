package load

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/propagit/propagit/internal/api/chartv1alpha1"
)

// A folder holding Chart.yaml is a Helm chart, never a set of templates:
// its files are not YAML until Helm renders them. A HelmChart object
// (chartv1alpha1) naming the folder has its files read into Set.Charts;
// a chart folder no HelmChart names, and a loose file with Helm
// placeholders, is one Finding that says how to have it rendered.

// HelmFindingMark is the part of every Helm finding that says why.
const HelmFindingMark = "declare a HelmChart (apiVersion propagit.io/v1alpha1) to have it rendered"

// IsHelmFinding reports whether f is about a Helm chart or template.
func IsHelmFinding(f Finding) bool { return strings.Contains(f.Message, HelmFindingMark) }

// helmChartFile names the file that makes a folder a Helm chart.
const helmChartFile = "Chart.yaml"

// isChartFolder reports whether a folder's entries make it a Helm chart.
func isChartFolder(names []string) bool { return slices.Contains(names, helmChartFile) }

// unusedChartFinding is the finding for a chart folder rel that no
// HelmChart names.
func unusedChartFinding(rel string) Finding {
	return Finding{Source: Source{Path: path.Join(rel, helmChartFile), Line: 1}, Message: "this folder is a Helm chart that no HelmChart names, so nothing of it is deployed; " +
		HelmFindingMark + " (spec.chart: the folder, relative to the HelmChart's file)"}
}

// helmPlaceholder matches what only Helm templates say: the chart's
// built-in objects (.Values, .Release, .Chart, .Capabilities) and
// include. Other tools' Go templates in ConfigMaps ({{ $labels.x }},
// {{ range .Alerts }}) do not match.
var helmPlaceholder = regexp.MustCompile(`\{\{-?\s*(?:include\s|(?:[^{}\n]*[\s($|])?\$?\.(?:Values|Release|Chart|Capabilities)\b)[^{}\n]*\}\}`)

// helmFileFinding returns the finding for a file outside any chart
// folder holding Helm placeholders, at the line of the first.
func helmFileFinding(rel string, data []byte) (Finding, bool) {
	loc := helmPlaceholder.FindIndex(data)
	if loc == nil {
		return Finding{}, false
	}
	ph := string(data[loc[0]:loc[1]])
	if len(ph) > 80 {
		ph = ph[:77] + "..."
	}
	return Finding{Source: Source{Path: rel, Line: 1 + bytes.Count(data[:loc[0]], []byte("\n"))}, Message: fmt.Sprintf(
		"this file holds Helm template placeholders (%s) outside a chart folder (one with Chart.yaml), so it is not read; move it into a chart's templates/ and %s", ph, HelmFindingMark)}, true
}

// helmCharts checks every HelmChart template's spec and reads what it
// names in the repository: the chart folder's files into set.Charts and
// its values files into set.ValuesFiles. Chart folders no HelmChart
// names become findings.
func (l *loader) helmCharts(c *collector) {
	used := map[string]bool{}
	for _, t := range c.set.Templates {
		if !chartv1alpha1.IsHelmChart(t.Object.GetAPIVersion(), t.Object.GetKind()) {
			continue
		}
		spec, err := chartv1alpha1.Decode(t.Object.Object)
		if err != nil {
			for _, e := range splitJoined(err) {
				c.problems = append(c.problems, problemf(t.Source, "", "HelmChart %q: %v", t.Object.GetName(), e))
			}
			continue
		}
		dir := path.Dir(t.Source.Path)
		if !spec.Remote() {
			rel, ok := inRepo(dir, spec.Chart)
			switch {
			case !ok:
				c.problems = append(c.problems, problemf(t.Source, "spec.chart", "HelmChart %q: %q is outside the repository", t.Object.GetName(), spec.Chart))
			case l.chartDirs[rel] == "":
				c.problems = append(c.problems, problemf(t.Source, "spec.chart", "HelmChart %q: %s is not a chart folder (a folder holding Chart.yaml) in the repository", t.Object.GetName(), relOrDot(rel)))
			case !used[rel]:
				used[rel] = true
				files, err := l.chartFiles(l.chartDirs[rel], rel)
				if err != nil {
					c.problems = append(c.problems, problemf(t.Source, "spec.chart", "HelmChart %q: chart %s: %v", t.Object.GetName(), rel, err))
					continue
				}
				if c.set.Charts == nil {
					c.set.Charts = map[string]map[string][]byte{}
				}
				c.set.Charts[rel] = files
			}
		}
		for i, f := range spec.ValuesFiles {
			rel, ok := inRepo(dir, f)
			if !ok {
				c.problems = append(c.problems, problemf(t.Source, fmt.Sprintf("spec.valuesFiles[%d]", i), "HelmChart %q: %q is outside the repository", t.Object.GetName(), f))
				continue
			}
			if _, done := c.set.ValuesFiles[rel]; done {
				continue
			}
			data, err := l.fs.readFile(filepath.Join(l.fs.root, filepath.FromSlash(rel)))
			if err != nil {
				c.problems = append(c.problems, problemf(t.Source, fmt.Sprintf("spec.valuesFiles[%d]", i), "HelmChart %q: values file %s: %v", t.Object.GetName(), rel, err))
				continue
			}
			if c.set.ValuesFiles == nil {
				c.set.ValuesFiles = map[string][]byte{}
			}
			c.set.ValuesFiles[rel] = data
		}
	}
	// A values file is read as values, not as objects: its "not a
	// Kubernetes object" finding goes.
	c.set.Findings = slices.DeleteFunc(c.set.Findings, func(f Finding) bool {
		_, values := c.set.ValuesFiles[f.Source.Path]
		return values && strings.HasPrefix(f.Message, "not a Kubernetes object")
	})
	for rel := range l.chartDirs {
		if !used[rel] {
			c.set.Findings = append(c.set.Findings, unusedChartFinding(rel))
		}
	}
}

// inRepo joins a path relative to dir and reports whether it stays in
// the repository.
func inRepo(dir, rel string) (string, bool) {
	p := path.Join(dir, rel)
	if p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
		return "", false
	}
	if p == "." {
		p = ""
	}
	return p, true
}

// maxChartFiles bounds the files read from one chart folder; helm's
// renderer bounds their bytes again.
const maxChartFiles = 5000

// chartFiles reads every file under a chart folder, within the load's
// budget, never through a link out of the repository.
func (l *loader) chartFiles(abs, rel string) (map[string][]byte, error) {
	files := map[string][]byte{}
	var walk func(dir, sub string) error
	walk = func(dir, sub string) error {
		names, err := l.fs.ReadDir(dir)
		if err != nil {
			return err
		}
		slices.Sort(names)
		for _, name := range names {
			full, r := filepath.Join(dir, name), path.Join(sub, name)
			if _, ok := l.fs.resolve(full); !ok {
				return fmt.Errorf("%s points outside the repository", path.Join(rel, r))
			}
			if l.fs.IsDir(full) {
				if err := walk(full, r); err != nil {
					return err
				}
				continue
			}
			if len(files) >= maxChartFiles {
				return fmt.Errorf("more than %d files", maxChartFiles)
			}
			data, err := l.fs.readFile(full)
			if err != nil {
				return err
			}
			files[r] = data
		}
		return nil
	}
	if err := walk(abs, ""); err != nil {
		return nil, err
	}
	return files, nil
}

// splitJoined lists the errors an errors.Join holds (err itself otherwise).
func splitJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
