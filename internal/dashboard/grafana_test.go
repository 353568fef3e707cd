package dashboard

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/testenv"
)

const grafanaFile = "../../deploy/grafana/propagit-dashboard.json"

var (
	promMetric  = regexp.MustCompile(`\bpropagit_\w+`)
	promMatcher = regexp.MustCompile(`(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"`)
	promGroup   = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	labelValues = regexp.MustCompile(`label_values\(\s*(\w+)\s*,\s*(\w+)\s*\)`)
)

// TestDashboardGrafanaQueries checks deploy/grafana against the real
// collectors, so that a renamed metric or label cannot leave a panel
// silently empty: promtool parses every query, and each metric, label and
// enumerated label value a query names is one internal/metrics exports.
func TestDashboardGrafanaQueries(t *testing.T) {
	exprs, vars := grafanaQueries(t)
	if len(exprs) < 10 {
		t.Fatalf("%s: %d queries, want the dashboard's panels", grafanaFile, len(exprs))
	}
	checkPromQL(t, exprs)
	exported := exportedSeries(t)
	for _, e := range append(exprs, vars...) {
		checkQuery(t, e, exported)
	}
}

// grafanaQueries returns the panels' queries and the variables' queries,
// the $cluster variable replaced by what "All" sends.
func grafanaQueries(t *testing.T) (exprs, vars []string) {
	t.Helper()
	data, err := os.ReadFile(grafanaFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", grafanaFile, err)
	}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, strings.ReplaceAll(tg.Expr, "$cluster", ".*"))
		}
	}
	for _, v := range d.Templating.List {
		if v.Definition != "" {
			vars = append(vars, v.Definition)
		}
	}
	return exprs, vars
}

// checkPromQL has promtool parse each query, as recording rules.
func checkPromQL(t *testing.T, exprs []string) {
	t.Helper()
	promtool := filepath.Join(testenv.DefaultAssetsDir(), "promtool")
	if _, err := os.Stat(promtool); err != nil {
		t.Fatalf("promtool missing (%v): run make test-assets", err)
	}
	var rules []map[string]string
	for i, e := range exprs {
		rules = append(rules, map[string]string{"record": fmt.Sprintf("grafana:query%d", i), "expr": e})
	}
	data, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "grafana", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "queries.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}

// exported maps each metric internal/metrics exports to its label names
// and the values recorded for them; histograms also answer to their
// _bucket, _sum and _count series.
type exported map[string]map[string][]string

// exportedSeries records one of each series, as the controller does, and
// gathers them.
func exportedSeries(t *testing.T) exported {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := metrics.NewRecorder()
	m.MustRegister(reg)
	for _, s := range []string{metrics.StatusTrue, metrics.StatusFalse, metrics.StatusUnknown} {
		m.ClusterReadyStatus("member", s)
	}
	m.ApplyResult("member", metrics.ApplySuccess)
	m.ApplyResult("member", metrics.ApplyFailure)
	m.ObjectsApplied("member", "created", 1)
	m.LastApplySuccess("member", time.Now())
	m.DriftDetected("member", "Deployment")
	m.DriftCorrected("member", "Deployment")
	m.Failover("member", "other")
	m.FailoverDuration(time.Second)
	m.PruneHeld("member", true)
	m.RenderErrors("member", 1)
	for _, r := range []string{metrics.ScheduleScheduled, metrics.ScheduleUnschedulable, metrics.ScheduleError} {
		m.ScheduleAttempt(r)
	}
	for _, r := range []string{metrics.ReconcileSuccess, metrics.ReconcileFailure, metrics.ReconcileStalled, metrics.ReconcileWaiting} {
		m.ReconcileDuration(time.Second, r)
	}
	m.SourceFetchError()
	m.SourceFetchSuccess(time.Now())
	m.SourceRevisionTimestamp(time.Now())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := exported{}
	for _, f := range families {
		labels := map[string][]string{}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = append(labels[l.GetName()], l.GetValue())
			}
		}
		out[f.GetName()] = labels
		if f.GetType() == dto.MetricType_HISTOGRAM {
			bucket := map[string][]string{"le": nil}
			for k, v := range labels {
				bucket[k] = v
			}
			out[f.GetName()+"_bucket"], out[f.GetName()+"_sum"], out[f.GetName()+"_count"] = bucket, labels, labels
		}
	}
	return out
}

// freeLabels take any value (names of members and kinds).
var freeLabels = []string{metrics.LabelCluster, metrics.LabelKind, metrics.LabelFromCluster, metrics.LabelToCluster, "le"}

// checkQuery checks that every metric of e is exported, that every label
// e names is a label of one of its metrics, and that every enumerated
// value it matches is one that is recorded.
func checkQuery(t *testing.T, e string, ex exported) {
	t.Helper()
	names := promMetric.FindAllString(e, -1)
	if len(names) == 0 {
		t.Errorf("query %q reads no propagit metric", e)
	}
	labels := map[string][]string{}
	for _, n := range names {
		l, ok := ex[n]
		if !ok {
			t.Errorf("query %q reads %s, which internal/metrics does not export", e, n)
			continue
		}
		for k, v := range l {
			labels[k] = append(labels[k], v...)
		}
	}
	known := func(label string) bool {
		_, ok := labels[label]
		return ok
	}
	for _, m := range promMatcher.FindAllStringSubmatch(e, -1) {
		label, op, value := m[1], m[2], m[3]
		if !known(label) {
			t.Errorf("query %q matches label %s, which %v do not have", e, label, names)
			continue
		}
		if slices.Contains(freeLabels, label) || value == ".*" {
			continue
		}
		want := []string{value}
		if op == "=~" || op == "!~" {
			want = strings.Split(value, "|")
		}
		for _, v := range want {
			if !slices.Contains(labels[label], v) {
				t.Errorf("query %q matches %s=%q, which is never recorded (values %v)", e, label, v, labels[label])
			}
		}
	}
	for _, g := range promGroup.FindAllStringSubmatch(e, -1) {
		for _, l := range strings.Split(g[1], ",") {
			if l = strings.TrimSpace(l); l != "" && !known(l) {
				t.Errorf("query %q groups by %s, which %v do not have", e, l, names)
			}
		}
	}
	for _, lv := range labelValues.FindAllStringSubmatch(e, -1) {
		if !known(lv[2]) {
			t.Errorf("variable query %q reads label %s, which %s does not have", e, lv[2], lv[1])
		}
	}
}
