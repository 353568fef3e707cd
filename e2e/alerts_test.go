package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/testenv"
)

const (
	alertsRuleFile = "../deploy/alerts/prometheusrule.yaml"
	alertsUnitFile = "../deploy/alerts/tests/alerts_test.yaml"
)

// TestSyncAlertRules checks deploy/alerts with the real promtool, because a
// broken alert stays silent instead of failing: the PrometheusRule's groups
// must be a valid rule file, every alert must fire and stay silent as the
// unit tests in deploy/alerts/tests say, and every metric the alerts and
// their tests read must be one internal/metrics exports, with those labels.
// promtool comes from make test-assets; without it the test fails rather
// than skips, so CI cannot pass without checking.
func TestSyncAlertRules(t *testing.T) {
	t.Parallel()
	promtool := filepath.Join(testenv.DefaultAssetsDir(), "promtool")
	if _, err := os.Stat(promtool); err != nil {
		t.Fatalf("promtool missing (%v): run make test-assets", err)
	}
	src, err := os.ReadFile(alertsRuleFile)
	if err != nil {
		t.Fatal(err)
	}
	// Untyped, so the rule file keeps every field the CR has.
	var cr struct {
		Spec struct {
			Groups []any `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(src, &cr); err != nil {
		t.Fatalf("%s: %v", alertsRuleFile, err)
	}
	rules, err := yaml.Marshal(map[string]any{"groups": cr.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	unit, err := os.ReadFile(alertsUnitFile)
	if err != nil {
		t.Fatal(err)
	}
	// The unit test file names rules.yaml beside it.
	dir := t.TempDir()
	rulesPath, unitPath := filepath.Join(dir, "rules.yaml"), filepath.Join(dir, "alerts_test.yaml")
	if err := os.WriteFile(rulesPath, rules, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unitPath, unit, 0o644); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, promtool, "check", "rules", rulesPath)
	runPromtool(t, promtool, "test", "rules", unitPath)
	checkEveryAlertTested(t, src, unit)
	checkSeriesExported(t, src, unit)
}

func runPromtool(t *testing.T, promtool string, args ...string) {
	t.Helper()
	out, err := exec.Command(promtool, args...).CombinedOutput()
	t.Logf("promtool %v:\n%s", args, out)
	if err != nil {
		t.Errorf("promtool %v: %v", args, err)
	}
}

// alertRules and ruleUnitTests are the parts of both files the checks read.
type alertRules struct {
	Spec struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string } `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

type ruleUnitTests struct {
	Tests []struct {
		InputSeries   []struct{ Series string } `json:"input_series"`
		AlertRuleTest []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

func parseAlertFiles(t *testing.T, src, unit []byte) (alertRules, ruleUnitTests) {
	t.Helper()
	var r alertRules
	var u ruleUnitTests
	if err := yaml.Unmarshal(src, &r); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(unit, &u); err != nil {
		t.Fatal(err)
	}
	return r, u
}

// checkEveryAlertTested fails for an alert with no unit test where it fires
// and none where it stays silent: a new alert must come with both.
func checkEveryAlertTested(t *testing.T, src, unit []byte) {
	rules, tests := parseAlertFiles(t, src, unit)
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				silent[a.Alertname] = true
			}
		}
	}
	n := 0
	for _, g := range rules.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			if !fires[r.Alert] || !silent[r.Alert] {
				t.Errorf("alert %s: %s needs a test where it fires and one where it does not (fires %v, silent %v)",
					r.Alert, alertsUnitFile, fires[r.Alert], silent[r.Alert])
			}
		}
	}
	if n == 0 {
		t.Errorf("no alerts found in %s", alertsRuleFile)
	}
}

var (
	metricName  = regexp.MustCompile(`\bpropagit_\w+`)
	seriesName  = regexp.MustCompile(`^\s*(\w+)\s*(?:\{(.*)\})?\s*$`)
	seriesLabel = regexp.MustCompile(`(\w+)\s*=\s*"([^"]*)"`)
)

// checkSeriesExported compares the metrics the alerts read, and the series
// their unit tests feed, with what internal/metrics exports: a renamed
// metric, label or label value would otherwise leave the alerts and their
// tests agreeing with each other while production never fires.
func checkSeriesExported(t *testing.T, src, unit []byte) {
	rules, tests := parseAlertFiles(t, src, unit)
	reg := prometheus.NewRegistry()
	m := metrics.NewRecorder()
	m.MustRegister(reg)
	// One of each series the unit tests use, recorded as the controller does.
	for _, s := range []string{metrics.StatusTrue, metrics.StatusFalse, metrics.StatusUnknown} {
		m.ClusterReadyStatus("member", s)
	}
	m.ApplyResult("member", metrics.ApplySuccess)
	m.ApplyResult("member", metrics.ApplyFailure)
	m.ScheduleAttempt(metrics.ScheduleScheduled)
	m.ScheduleAttempt(metrics.ScheduleUnschedulable)
	m.DriftCorrected("member", "Deployment")
	m.SourceFetchSuccess(time.Now())
	m.PruneHeld("member", true)
	m.RenderErrors("member", 1)
	m.SourceUnverified("")
	m.Rollout("RolloutPolicy.propagit.io/shop/web", "RolledBack", 0, nil)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// exported: metric name → label name → values seen.
	exported := map[string]map[string][]string{}
	for _, f := range families {
		labels := map[string][]string{}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = append(labels[l.GetName()], l.GetValue())
			}
		}
		exported[f.GetName()] = labels
	}
	for _, g := range rules.Spec.Groups {
		for _, r := range g.Rules {
			for _, name := range metricName.FindAllString(r.Expr, -1) {
				if exported[name] == nil {
					t.Errorf("alert %s reads %s, which internal/metrics does not export", r.Alert, name)
				}
			}
		}
	}
	for _, tc := range tests.Tests {
		for _, in := range tc.InputSeries {
			checkSeries(t, in.Series, exported)
		}
	}
}

// checkSeries checks one input series: its metric exists with exactly
// these label names, and enumerated label values (all but cluster and kind,
// which are free-form) are ones the Recorder records.
func checkSeries(t *testing.T, series string, exported map[string]map[string][]string) {
	t.Helper()
	parts := seriesName.FindStringSubmatch(series)
	if parts == nil {
		t.Errorf("cannot parse input series %q", series)
		return
	}
	want, ok := exported[parts[1]]
	if !ok {
		t.Errorf("input series %s: internal/metrics exports no %s", series, parts[1])
		return
	}
	var got []string
	for _, l := range seriesLabel.FindAllStringSubmatch(parts[2], -1) {
		got = append(got, l[1])
		free := l[1] == metrics.LabelCluster || l[1] == metrics.LabelKind
		if values, ok := want[l[1]]; ok && !free && !slices.Contains(values, l[2]) {
			t.Errorf("input series %s: %s=%q is never recorded (values: %v)", series, l[1], l[2], values)
		}
	}
	var wantNames []string
	for name := range want {
		wantNames = append(wantNames, name)
	}
	slices.Sort(got)
	slices.Sort(wantNames)
	if !slices.Equal(got, wantNames) {
		t.Errorf("input series %s: labels %v, internal/metrics exports %v", series, got, wantNames)
	}
}
