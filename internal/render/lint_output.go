package render

import (
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"slices"
)

// LintRecord is one finding as `propagit lint -o json` writes it. The
// field names are stable: CI scripts read them.
type LintRecord struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Severity Severity `json:"severity"`
	Rule     string   `json:"rule"`
	Message  string   `json:"message"`
}

// WriteLintJSON writes the findings as a JSON array of LintRecord ([]
// when there is none).
func WriteLintJSON(w io.Writer, findings []Finding) error {
	out := make([]LintRecord, 0, len(findings))
	for _, f := range findings {
		out = append(out, LintRecord{File: f.Source.Path, Line: f.Source.Line, Severity: f.Severity, Rule: f.Rule, Message: f.Message})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// SARIF 2.1.0, the subset GitHub code scanning reads: one run, its tool
// with the rules the results use, and results located by a path relative
// to the source root (uriBaseId SRCROOT) and a line.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool               sarifTool                   `json:"tool"`
		OriginalURIBaseIDs map[string]sarifArtifactLoc `json:"originalUriBaseIds,omitempty"`
		Results            []sarifResult               `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version,omitempty"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID               string       `json:"id"`
		ShortDescription sarifMessage `json:"shortDescription"`
		DefaultConfig    sarifConfig  `json:"defaultConfiguration"`
	}
	sarifConfig struct {
		Level string `json:"level"`
	}
	sarifMessage struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID    string          `json:"ruleId"`
		RuleIndex int             `json:"ruleIndex"`
		Level     string          `json:"level"`
		Message   sarifMessage    `json:"message"`
		Locations []sarifLocation `json:"locations,omitempty"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical `json:"physicalLocation"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifactLoc `json:"artifactLocation"`
		Region           *sarifRegion     `json:"region,omitempty"`
	}
	sarifArtifactLoc struct {
		URI       string `json:"uri"`
		URIBaseID string `json:"uriBaseId,omitempty"`
	}
	sarifRegion struct {
		StartLine int `json:"startLine"`
	}
)

// sarifLevel maps a severity to SARIF's level.
func sarifLevel(s Severity) string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	}
	return "note"
}

// WriteLintSARIF writes the findings as a SARIF 2.1.0 log for GitHub code
// scanning, which shows each result on its line in the pull request.
// root is the source folder the finding paths are relative to; version
// is propagit's. A finding about the whole fleet (root itself) has no
// location.
func WriteLintSARIF(w io.Writer, findings []Finding, root, version string) error {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "propagit", Version: version,
		InformationURI: "https://github.com/propagit/propagit", Rules: []sarifRule{}}}, Results: []sarifResult{}}
	if abs, err := filepath.Abs(root); err == nil {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs) + "/"}
		run.OriginalURIBaseIDs = map[string]sarifArtifactLoc{"SRCROOT": {URI: u.String()}}
	}
	index := map[string]int{}
	for _, f := range findings {
		rule := f.Rule
		if rule == "" {
			rule = RuleLoad
		}
		i, seen := index[rule]
		if !seen {
			i = len(run.Tool.Driver.Rules)
			index[rule] = i
			run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: rule,
				ShortDescription: sarifMessage{Text: ruleDescription(rule)}, DefaultConfig: sarifConfig{Level: sarifLevel(f.Severity)}})
		}
		r := sarifResult{RuleID: rule, RuleIndex: i, Level: sarifLevel(f.Severity), Message: sarifMessage{Text: f.Message}}
		if f.Source.Path != root && f.Source.Path != "" {
			loc := sarifPhysical{ArtifactLocation: sarifArtifactLoc{URI: (&url.URL{Path: f.Source.Path}).String(), URIBaseID: "SRCROOT"}}
			if f.Source.Line > 0 {
				loc.Region = &sarifRegion{StartLine: f.Source.Line}
			}
			r.Locations = []sarifLocation{{PhysicalLocation: loc}}
		}
		run.Results = append(run.Results, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}

func ruleDescription(rule string) string {
	if d, ok := RuleDescriptions[rule]; ok {
		return d
	}
	return rule
}

// LintRules lists the rule ids, sorted.
func LintRules() []string {
	out := make([]string, 0, len(RuleDescriptions))
	for r := range RuleDescriptions {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}
