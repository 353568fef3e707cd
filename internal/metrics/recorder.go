package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
)

// Label names.
const (
	LabelCluster     = "cluster"
	LabelStatus      = "status"
	LabelState       = "state"
	LabelResult      = "result"
	LabelKind        = "kind"
	LabelAction      = "action"
	LabelProvider    = "provider"
	LabelFromCluster = "from_cluster"
	LabelToCluster   = "to_cluster"
	LabelStage       = "stage"
)

// Other is recorded in place of an enumerated label value outside its list.
const Other = "other"

// Recorder records propagit's metrics. Build it with NewRecorder and register
// it with MustRegister.
type Recorder struct {
	clusterReady    *prometheus.GaugeVec
	works           *prometheus.GaugeVec
	scheduleAttempt *prometheus.CounterVec
	policyMatches   *prometheus.GaugeVec
	apply           *prometheus.CounterVec
	appliedObjects  *prometheus.CounterVec
	driftDetected   *prometheus.CounterVec
	driftCorrected  *prometheus.CounterVec
	reconcile       *prometheus.HistogramVec
	stages          *prometheus.HistogramVec
	fetchErrors     prometheus.Counter
	revisionTime    prometheus.Gauge
	failover        *prometheus.CounterVec
	failoverSeconds prometheus.Histogram
	webhook         *prometheus.CounterVec
	pruneHeld       *prometheus.GaugeVec
	renderErrors    *prometheus.GaugeVec
	lastApply       *ageCollector
	lastFetch       *ageCollector
	rollouts        *rolloutMetrics
	verification    verification
}

// NewRecorder builds a Recorder on the real clock.
func NewRecorder() *Recorder {
	return NewRecorderWithClock(clock.RealClock{})
}

// NewRecorderWithClock builds a Recorder whose "seconds since" gauges are
// computed from clk at scrape time.
func NewRecorderWithClock(clk clock.PassiveClock) *Recorder {
	return &Recorder{
		clusterReady:    newGaugeVec("propagit_cluster_ready_condition", "Ready condition of a member cluster: 1 for its current status (True, False or Unknown), 0 for the others.", LabelCluster, LabelStatus),
		works:           newGaugeVec("propagit_works", "Number of Works by state.", LabelState),
		scheduleAttempt: newCounterVec("propagit_schedule_attempts_total", "Scheduling attempts of a resource template by result.", LabelResult),
		policyMatches:   newGaugeVec("propagit_policy_matches", "Resource templates matched by a policy, by policy kind.", LabelKind),
		apply:           newCounterVec("propagit_apply_total", "Work applies on a member cluster by result.", LabelCluster, LabelResult),
		appliedObjects:  newCounterVec("propagit_applied_objects_total", "Objects handled by applies on a member cluster, by action.", LabelCluster, LabelAction),
		driftDetected:   newCounterVec("propagit_drift_detected_total", "Objects found changed on a member cluster by another field manager.", LabelCluster, LabelKind),
		driftCorrected:  newCounterVec("propagit_drift_corrected_total", "Drifted objects reverted to what Git says.", LabelCluster, LabelKind),
		reconcile: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "propagit_reconcile_duration_seconds",
			Help:    "Duration of one hub reconcile (fetch to Works recorded), by result.",
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{LabelResult}),
		stages: newStageHistogram(),
		fetchErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "propagit_source_fetch_errors_total",
			Help: "Failed fetches of the Git source.",
		}),
		revisionTime: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "propagit_source_revision_timestamp_seconds",
			Help: "Commit time of the source revision last loaded, in Unix seconds.",
		}),
		failover: newCounterVec("propagit_failover_total", "Replicas moved away from an unhealthy member cluster.", LabelFromCluster, LabelToCluster),
		failoverSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "propagit_failover_duration_seconds",
			Help:    "Time from a member turning NotReady to its applications being placed elsewhere.",
			Buckets: []float64{1, 5, 10, 30, 60, 120, 300, 600, 1800},
		}),
		renderErrors: newGaugeVec("propagit_render_errors", "Templates that failed to render for a member in the revision in force; each keeps what the member ran.", LabelCluster),
		pruneHeld:    newGaugeVec("propagit_prune_held", "1 while a member is held on an earlier revision because the newest would delete more of it than the prune guard allows.", LabelCluster),
		webhook:      newCounterVec("propagit_webhook_requests_total", "Requests to the Git webhook by provider and result.", LabelProvider, LabelResult),
		lastApply: newAgeCollector(clk, LabelCluster,
			"propagit_last_apply_success_timestamp_seconds", "Time of the last successful apply on a member cluster, in Unix seconds.",
			"propagit_seconds_since_last_apply", "Seconds since the last successful apply on a member cluster."),
		lastFetch: newAgeCollector(clk, "",
			"propagit_source_last_fetch_success_timestamp_seconds", "Time of the last successful fetch of the Git source, in Unix seconds.",
			"propagit_seconds_since_last_source_fetch", "Seconds since the last successful fetch of the Git source."),
		rollouts:     newRolloutMetrics(),
		verification: newVerification(),
	}
}

// Collectors returns every collector of the Recorder, unregistered.
func (r *Recorder) Collectors() []prometheus.Collector {
	return append([]prometheus.Collector{
		r.clusterReady, r.works, r.scheduleAttempt, r.policyMatches, r.apply, r.appliedObjects,
		r.driftDetected, r.driftCorrected, r.reconcile, r.stages, r.fetchErrors, r.revisionTime,
		r.failover, r.failoverSeconds, r.webhook, r.pruneHeld, r.renderErrors, r.lastApply, r.lastFetch,
	}, append(r.rollouts.collectors(), r.verification.collectors()...)...)
}

// MustRegister registers every collector with reg; it panics on a duplicate,
// like prometheus.Registerer.MustRegister.
func (r *Recorder) MustRegister(reg prometheus.Registerer) {
	reg.MustRegister(r.Collectors()...)
}

func newGaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

func newCounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// oneOf returns v when it is in allowed, Other otherwise.
func oneOf(v string, allowed ...string) string {
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	return Other
}
