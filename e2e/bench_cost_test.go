package e2e

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/propagit/propagit/internal/controller"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works"
)

// costProbe reads what the benchmark's controller has done so far: its
// costs (templates rendered, objects written), the time each stage of its
// reconciles took (propagit_reconcile_stage_seconds) and the CPU time the
// members' processes and this process (the controller, with the
// benchmark's own watches) have used.
type costProbe struct {
	t       testing.TB
	reg     *prometheus.Registry
	c       *controller.Controller
	members []*testenv.Member
}

// stageTime is the time a stage took over count runs.
type stageTime struct {
	sum   float64
	count uint64
}

// commitCosts is what the controller did between two snapshots.
type commitCosts struct {
	costs  controller.Costs
	stages map[string]stageTime
	// cpu is CPU seconds by process: the members' binaries summed by
	// name (kube-apiserver, etcd) and "propagit" for this process.
	cpu map[string]float64
}

// snapshot reads the controller's costs and stage histogram now.
func (p *costProbe) snapshot() commitCosts {
	p.t.Helper()
	out := commitCosts{costs: p.c.Costs(), stages: map[string]stageTime{}, cpu: map[string]float64{}}
	self, err := testenv.CPUSeconds(map[string]int{"propagit": 0})
	if err != nil {
		p.t.Fatal(err)
	}
	out.cpu["propagit"] = self["propagit"]
	for _, m := range p.members {
		used, err := testenv.CPUSeconds(m.PIDs())
		if err != nil {
			p.t.Fatal(err)
		}
		for name, s := range used {
			out.cpu[name] += s
		}
	}
	fams, err := p.reg.Gather()
	if err != nil {
		p.t.Fatalf("metrics: %v", err)
	}
	for _, f := range fams {
		if f.GetName() != "propagit_reconcile_stage_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == metrics.LabelStage {
					out.stages[l.GetValue()] = stageTime{sum: m.GetHistogram().GetSampleSum(), count: m.GetHistogram().GetSampleCount()}
				}
			}
		}
	}
	return out
}

// sub returns c minus before.
func (c commitCosts) sub(before commitCosts) commitCosts {
	neg := works.WriteCounts{Blobs: -before.costs.Written.Blobs, Trees: -before.costs.Written.Trees,
		StatusWrites: -before.costs.Written.StatusWrites, StatusEntries: -before.costs.Written.StatusEntries}
	out := commitCosts{costs: controller.Costs{TemplatesRendered: c.costs.TemplatesRendered - before.costs.TemplatesRendered,
		Written: c.costs.Written.Add(neg)}, stages: map[string]stageTime{}, cpu: map[string]float64{}}
	for s, t := range c.stages {
		b := before.stages[s]
		out.stages[s] = stageTime{sum: t.sum - b.sum, count: t.count - b.count}
	}
	for name, s := range c.cpu {
		out.cpu[name] = s - before.cpu[name]
	}
	return out
}

// add returns c plus d.
func (c commitCosts) add(d commitCosts) commitCosts {
	out := commitCosts{costs: controller.Costs{TemplatesRendered: c.costs.TemplatesRendered + d.costs.TemplatesRendered,
		Written: c.costs.Written.Add(d.costs.Written)}, stages: map[string]stageTime{}, cpu: map[string]float64{}}
	for _, from := range []map[string]float64{c.cpu, d.cpu} {
		for name, s := range from {
			out.cpu[name] += s
		}
	}
	for s, t := range c.stages {
		out.stages[s] = t
	}
	for s, t := range d.stages {
		o := out.stages[s]
		out.stages[s] = stageTime{sum: o.sum + t.sum, count: o.count + t.count}
	}
	return out
}

// guardOneTemplate fails the benchmark when commit i, which changed one
// template sent to every member, cost more than that: more than one
// template rendered, more blobs than the object's file (written once for
// every member) and each member's work.yaml (which carries the new source
// revision), or more than one status entry encoded per member (the
// object's result).
func (c commitCosts) guardOneTemplate(b *testing.B, i, members int) {
	b.Helper()
	w := c.costs.Written
	if n := c.costs.TemplatesRendered; n > 1 {
		b.Errorf("commit %d changed one template and rendered %d", i, n)
	}
	if w.Blobs > int64(1+members) {
		b.Errorf("commit %d changed one object on %d members and wrote %d blobs, want at most %d", i, members, w.Blobs, 1+members)
	}
	if w.StatusEntries > int64(members) {
		b.Errorf("commit %d changed one object on %d members and encoded %d status entries in %d records, want at most %d",
			i, members, w.StatusEntries, w.StatusWrites, members)
	}
}

// report logs the costs per commit and the mean time of each stage, and
// reports the stages as ms-<stage> metrics.
func (c commitCosts) report(b *testing.B, commits int) {
	b.Helper()
	if commits == 0 {
		return
	}
	n := float64(commits)
	w := c.costs.Written
	b.Logf("per commit: %.1f templates rendered, %.1f blobs and %.1f trees written, %.1f status records with %.1f entries encoded",
		float64(c.costs.TemplatesRendered)/n, float64(w.Blobs)/n, float64(w.Trees)/n, float64(w.StatusWrites)/n, float64(w.StatusEntries)/n)
	var parts []string
	for _, s := range metrics.Stages {
		t, ok := c.stages[s]
		if !ok || t.count == 0 {
			continue
		}
		mean := time.Duration(t.sum / float64(t.count) * float64(time.Second))
		parts = append(parts, fmt.Sprintf("%s %s (×%.1f)", s, mean.Round(10*time.Microsecond), float64(t.count)/n))
		b.ReportMetric(float64(mean)/float64(time.Millisecond), "ms-"+s)
	}
	b.Logf("stages, mean per run (runs per commit): %s", strings.Join(parts, ", "))
	// The members share this machine's cores with the controller: the CPU
	// all of them spend on a commit, over the cores, is a floor under its
	// latency that no change to propagit's own code can lower.
	total := 0.0
	parts = parts[:0]
	for _, name := range slices.Sorted(maps.Keys(c.cpu)) {
		perCommit := c.cpu[name] / n
		total += perCommit
		parts = append(parts, fmt.Sprintf("%s %.3f s", name, perCommit))
		b.ReportMetric(perCommit, "cpu-s-"+name)
	}
	floor := time.Duration(total / float64(runtime.GOMAXPROCS(0)) * float64(time.Second))
	b.Logf("CPU per commit: %s; %.3f s in all, at least %s of wall time on %d cores",
		strings.Join(parts, ", "), total, floor.Round(time.Millisecond), runtime.GOMAXPROCS(0))
}

// settle runs one more pass on rev, untimed, and waits until it recorded.
// A fleet's first recording has no previous placement, and the schedule
// memo keys each template by its previous placement: the next pass, the
// first with one, renders every template once more. That is a one-time cost
// of a fleet's first recording, not of a commit, so it is taken before the
// timed commits (it shows in the log as templatesRendered on this pass).
func (p *costProbe) settle(hook *githubHook, rev string) {
	p.t.Helper()
	before := p.snapshot()
	hook.push(rev)
	eventually(p.t, converge, func() (bool, string) {
		n := p.snapshot().stages[metrics.StageRecord].count - before.stages[metrics.StageRecord].count
		return n > 0, "no pass recorded after the settling push"
	})
	p.t.Logf("settling pass on %s rendered %d templates", rev[:7], p.c.Costs().TemplatesRendered-before.costs.TemplatesRendered)
}
