package metrics

import "github.com/prometheus/client_golang/prometheus"

// LabelReason names why a signature did not verify.
const LabelReason = "reason"

// Verification reasons, as internal/verify names them (metrics does not
// import it); any other is recorded as Other.
var verifyReasons = []string{"Unsigned", "UntrustedKey", "BadSignature", "MalformedSignature", "KeyExpired",
	"KeyRevoked", "TooLarge", "TooManyCommits", "Error"}

// verification holds the signature verification series: the source's
// commits (the controller) and the Works' commits (an agent).
type verification struct {
	sourceUnverified *prometheus.GaugeVec
	sourceFailures   *prometheus.CounterVec
	worksRefused     *prometheus.CounterVec
}

func newVerification() verification {
	return verification{
		sourceUnverified: newGaugeVec("propagit_source_unverified", "1 while the newest source revision is refused because a commit is not signed by a trusted key (the reason says why); the last verified revision stays in force.", LabelReason),
		sourceFailures:   newCounterVec("propagit_source_verification_failures_total", "Source revisions refused by commit signature verification, by reason.", LabelReason),
		worksRefused:     newCounterVec("propagit_works_refused_total", "Works an agent refused because their commit is not signed by the controller's key, by reason.", LabelReason),
	}
}

func (v verification) collectors() []prometheus.Collector {
	return []prometheus.Collector{v.sourceUnverified, v.sourceFailures, v.worksRefused}
}

// SourceUnverified records that the newest source revision is refused for
// reason, or with reason "" that it verified (or nothing is verified).
func (r *Recorder) SourceUnverified(reason string) {
	if r == nil {
		return
	}
	if reason != "" {
		reason = oneOf(reason, verifyReasons...)
	}
	for _, rr := range append(verifyReasons, Other) {
		v := 0.0
		if rr == reason {
			v = 1
		}
		r.verification.sourceUnverified.WithLabelValues(rr).Set(v)
	}
}

// SourceVerificationFailed counts one refused source revision.
func (r *Recorder) SourceVerificationFailed(reason string) {
	if r == nil {
		return
	}
	r.verification.sourceFailures.WithLabelValues(oneOf(reason, verifyReasons...)).Inc()
}

// WorkRefused counts one Work an agent refused.
func (r *Recorder) WorkRefused(reason string) {
	if r == nil {
		return
	}
	r.verification.worksRefused.WithLabelValues(oneOf(reason, verifyReasons...)).Inc()
}
