package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/status"
)

// hostile retitles the terminal, clears the screen and hides what came
// before it behind a carriage return, as a member's status message, a
// script's error or a name from Git could.
const hostile = "\x1b]0;pwned\x07\x1b[2J\rall healthy\u009b31m"

// harmless fails t when out could drive a terminal, and when the hostile
// text is missing altogether (it must be shown, escaped).
func harmless(t *testing.T, what, out string) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\x07\r\u009b") {
		t.Errorf("%s reaches the terminal raw:\n%q", what, out)
	}
	if !strings.Contains(out, `\x1b]0;pwned\x07\x1b[2J\rall healthy`) {
		t.Errorf("%s does not show the hostile text escaped:\n%q", what, out)
	}
}

// TestStatusPrintsMemberTextHarmless: every text field of the report that a
// member, a script or Git wrote is escaped in text, wide and name output.
func TestStatusPrintsMemberTextHarmless(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rep := &status.Report{Summary: "abc1234: 1/2 clusters applied and healthy",
		Clusters:  []status.ClusterRow{{Name: "edge-1", Mode: "Pull"}, {Name: "member1", Mode: "Push"}},
		Templates: []status.TemplateRow{{Clusters: []string{"edge-1", "member1"}}}}
	rep.Summary += hostile
	rep.Clusters[0].Message = hostile + "\nforged-member\tPull"
	rep.Clusters[1].Name = "member1" + hostile
	rep.Clusters[0].KubernetesVersion = hostile
	rep.Templates[0].Template = hostile
	rep.RenderErrors = []status.RenderErrorRow{{Cluster: "edge-1", Error: hostile}}
	rep.ScheduleErrors = []string{hostile}
	rep.Unclaimed = []status.UnclaimedRow{{Template: hostile, Clusters: []string{"edge-1"}}}
	rep.Drift = []status.DriftRow{{Cluster: "edge-1", Object: hostile, Manager: hostile, Action: "Corrected", Time: now}}
	for _, format := range []string{"text", "wide", "name"} {
		var out bytes.Buffer
		if err := status.Write(&out, rep, format, now); err != nil {
			t.Fatal(err)
		}
		harmless(t, "status -o "+format, out.String())
		if strings.Contains(out.String(), "\nforged-member") {
			t.Errorf("status -o %s: a message forged a row:\n%s", format, out.String())
		}
	}
}

// TestWaitPrintsMemberTextHarmless: the progress lines on stderr and the
// table printed on timeout escape a member's Ready message. (The git store
// refuses control characters in YAML; the cr store's JSON carries them.)
func TestWaitPrintsMemberTextHarmless(t *testing.T) {
	ps := []status.Progress{{Cluster: "m1", Ready: "False", Message: hostile + "\nm9\tyes"}}
	var out bytes.Buffer
	status.WriteProgress(&out, ps)
	harmless(t, "wait's table", out.String())
	var errOut bytes.Buffer
	w := &waiter{opts: &waitOptions{revision: waitRev1, forState: "healthy"}, stderr: &errOut}
	w.announce(ps[0])
	harmless(t, "wait's progress", errOut.String())
	if strings.Count(out.String(), "\n") != 2 || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("a message must not add lines:\n%s%s", out.String(), errOut.String())
	}
}

// TestExplainPrintsHarmless: explain's text escapes names, reasons and
// verdicts from the source.
func TestExplainPrintsHarmless(t *testing.T) {
	e := render.Explanation{Template: hostile, Source: hostile, Policy: hostile, PolicyReason: hostile,
		Candidates:   []render.CandidateVerdict{{Policy: hostile, Match: hostile}},
		Terms:        []render.TermVerdict{{Clusters: []render.ClusterVerdict{{Name: hostile, Verdict: hostile}}, Error: hostile}},
		Targets:      []render.TargetExplanation{{Cluster: hostile, Error: hostile, Changes: []string{hostile}}},
		DependencyOf: []string{hostile}, Steps: []string{hostile}, Evictions: []string{hostile}}
	var out bytes.Buffer
	render.WriteExplanation(&out, e)
	harmless(t, "explain", out.String())
}

// A command's error can quote a member's status or a name from Git: it
// reaches the terminal with its control characters escaped, its lines kept.
func TestErrorsPrintHarmless(t *testing.T) {
	var buf bytes.Buffer
	printError(&buf, errors.New("wait: member1: \x1b]0;pwned\x07\x1b[2J failed\nsecond line"))
	got := buf.String()
	if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, "\nsecond line") {
		t.Errorf("printed %q: want control characters escaped and the newline kept", got)
	}
}
