package load

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Helm charts are not rendered (issue #29). Their templates are not YAML
// until Helm renders them, so reading them gave one "invalid YAML" or
// "not a Kubernetes object" per template; instead a chart folder, or a
// file with Helm placeholders, is one Finding that says so. Rendering, when
// it comes, replaces helmChartFinding and helmFileFinding.

// HelmNotRendered is the part of every Helm finding that says why.
const HelmNotRendered = "propagit does not render Helm charts yet (issue #29)"

// IsHelmFinding reports whether f is about a Helm chart or template.
func IsHelmFinding(f Finding) bool { return strings.Contains(f.Message, HelmNotRendered) }

// helmChartFile names the file that makes a folder a Helm chart.
const helmChartFile = "Chart.yaml"

// helmChartFinding returns the finding for the folder rel when its
// entries, names, make it a Helm chart.
func helmChartFinding(rel string, names []string) (Finding, bool) {
	if !slices.Contains(names, helmChartFile) {
		return Finding{}, false
	}
	return Finding{Source: Source{Path: path.Join(rel, helmChartFile), Line: 1}, Message: "this folder is a Helm chart; " +
		HelmNotRendered + ": commit the output of `helm template` instead; nothing in this folder is read"}, true
}

// helmPlaceholder matches what only Helm templates say: the chart's
// built-in objects (.Values, .Release, .Chart, .Capabilities) and
// include. Other tools' Go templates in ConfigMaps ({{ $labels.x }},
// {{ range .Alerts }}) do not match.
var helmPlaceholder = regexp.MustCompile(`\{\{-?\s*(?:include\s|(?:[^{}\n]*[\s($|])?\$?\.(?:Values|Release|Chart|Capabilities)\b)[^{}\n]*\}\}`)

// helmFileFinding returns the finding for a file holding Helm
// placeholders, at the line of the first.
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
		"this file holds Helm template placeholders (%s); %s: commit the output of `helm template` instead; the file is not read", ph, HelmNotRendered)}, true
}
