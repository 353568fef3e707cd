package render

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/load"
)

// TestWriteLintSARIFLocations: a finding in a file has its path relative
// to the source root (percent-encoded, a URI) and line; one about the
// whole fleet (the root itself) has no location; rules are listed once,
// in order of first use, and results point at them.
func TestWriteLintSARIFLocations(t *testing.T) {
	findings := []Finding{
		{Severity: SeverityWarning, Rule: RuleUnknownCluster, Finding: load.Finding{Source: load.Source{Path: "apps/my app.yaml", Line: 11}, Message: "a"}},
		{Severity: SeverityError, Rule: RuleEmptyRender, Finding: load.Finding{Source: load.Source{Path: "fleet"}, Message: "b"}},
		{Severity: SeverityInfo, Rule: RuleUnknownCluster, Finding: load.Finding{Source: load.Source{Path: "p.yaml", Line: 2}, Message: "c"}},
	}
	var buf bytes.Buffer
	if err := WriteLintSARIF(&buf, findings, "fleet", "v1.2.3"); err != nil {
		t.Fatal(err)
	}
	var log sarifLog
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if got := []string{run.Tool.Driver.Rules[0].ID, run.Tool.Driver.Rules[1].ID}; len(run.Tool.Driver.Rules) != 2 || !cmp.Equal(got, []string{RuleUnknownCluster, RuleEmptyRender}) {
		t.Errorf("rules %v", run.Tool.Driver.Rules)
	}
	want := []sarifResult{
		{RuleID: RuleUnknownCluster, RuleIndex: 0, Level: "warning", Message: sarifMessage{"a"}, Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
			ArtifactLocation: sarifArtifactLoc{URI: "apps/my%20app.yaml", URIBaseID: "SRCROOT"}, Region: &sarifRegion{StartLine: 11}}}}},
		{RuleID: RuleEmptyRender, RuleIndex: 1, Level: "error", Message: sarifMessage{"b"}},
		{RuleID: RuleUnknownCluster, RuleIndex: 0, Level: "note", Message: sarifMessage{"c"}, Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
			ArtifactLocation: sarifArtifactLoc{URI: "p.yaml", URIBaseID: "SRCROOT"}, Region: &sarifRegion{StartLine: 2}}}}},
	}
	if diff := cmp.Diff(want, run.Results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	for _, r := range LintRules() {
		if RuleDescriptions[r] == "" {
			t.Errorf("rule %s has no description", r)
		}
	}
}
