package metrics

import "github.com/prometheus/client_golang/prometheus"

// LabelPolicy and LabelPhase label the rollout metrics.
const (
	LabelPolicy = "policy"
	LabelPhase  = "phase"
)

// rolloutPhases are the phases a rollout can be in (rollout.Phase).
var rolloutPhases = []string{"Progressing", "Paused", "Complete", "Halted", "RolledBack"}

// rolloutStates are how a rollout's clusters stand.
var rolloutStates = []string{"waiting", "progressing", "healthy", "failed"}

// rolloutMetrics is the propagit_rollout_* family.
type rolloutMetrics struct {
	phase    *prometheus.GaugeVec
	wave     *prometheus.GaugeVec
	clusters *prometheus.GaugeVec
}

func newRolloutMetrics() *rolloutMetrics {
	return &rolloutMetrics{
		phase: newGaugeVec("propagit_rollout_phase", "Phase of the newest rollout of a RolloutPolicy: 1 for its current phase (Progressing, Paused, Complete, Halted, RolledBack), 0 for the others.",
			LabelPolicy, LabelPhase),
		wave: newGaugeVec("propagit_rollout_wave", "Index of the open wave of a RolloutPolicy's rollout (0 for the first; the number of waves plus one when complete).", LabelPolicy),
		clusters: newGaugeVec("propagit_rollout_clusters", "Clusters of a RolloutPolicy's rollout by state: waiting for their wave, progressing, healthy, failed.",
			LabelPolicy, LabelState),
	}
}

func (m *rolloutMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.phase, m.wave, m.clusters}
}

// Rollout records where a RolloutPolicy's rollout stands.
func (r *Recorder) Rollout(policy, phase string, wave int, clusters map[string]int) {
	if r == nil {
		return
	}
	for _, p := range rolloutPhases {
		v := 0.0
		if p == phase {
			v = 1
		}
		r.rollouts.phase.WithLabelValues(policy, p).Set(v)
	}
	r.rollouts.wave.WithLabelValues(policy).Set(float64(wave))
	for _, s := range rolloutStates {
		r.rollouts.clusters.WithLabelValues(policy, s).Set(float64(clusters[s]))
	}
}

// RolloutGone drops the series of a RolloutPolicy removed from Git.
func (r *Recorder) RolloutGone(policy string) {
	if r == nil {
		return
	}
	for _, v := range []*prometheus.GaugeVec{r.rollouts.phase, r.rollouts.wave, r.rollouts.clusters} {
		v.DeletePartialMatch(prometheus.Labels{LabelPolicy: policy})
	}
}
