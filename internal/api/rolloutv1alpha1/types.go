// Package rolloutv1alpha1 is the RolloutPolicy object: how a new revision of
// the templates it selects reaches the fleet, wave by wave, and what happens
// when a wave fails. It is propagit's own object (Karmada has none); its
// vocabulary is Karmada's (resourceSelectors, clusterAffinity) so a Karmada
// user reads it at a glance.
package rolloutv1alpha1

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

const (
	Group      = "propagit.io"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
	Kind       = "RolloutPolicy"
)

// RolloutPolicy rolls the templates it selects out in waves.
type RolloutPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec `json:"spec"`
}

// Spec is a RolloutPolicy's spec.
type Spec struct {
	// ResourceSelectors select the templates the rollout governs, as a
	// PropagationPolicy's do; empty selects every template (of the
	// policy's namespace when it has one).
	ResourceSelectors []policyv1alpha1.ResourceSelector `json:"resourceSelectors,omitempty"`
	// Waves, in order. A cluster belongs to the first wave whose affinity
	// it matches; clusters in no wave form a last wave, "rest".
	Waves []Wave `json:"waves"`
	// ProgressDeadline is how long a cluster has, once its wave gave it
	// the revision, to report it applied and healthy (and how long it may
	// stay unhealthy during the soak) before it counts as failed.
	// Default 10m.
	ProgressDeadline *metav1.Duration `json:"progressDeadline,omitempty"`
	// MaxFailures is how many clusters of one wave may fail (a number or
	// a percentage of the wave, rounded down) before the rollout stops.
	// Default 0.
	MaxFailures *intstr.IntOrString `json:"maxFailures,omitempty"`
	// OnFailure is what a stopped rollout does: Halt (default) keeps the
	// clusters where they are; Rollback gives the clusters that took the
	// failed revision the last revision that completed its rollout.
	OnFailure FailureAction `json:"onFailure,omitempty"`
	// Paused stops the rollout where it is: no wave opens and no further
	// cluster gets the revision until it is false again.
	Paused bool `json:"paused,omitempty"`
	// Abort stops the rollout in force as a failure with Rollback does
	// (every cluster it reached runs the last completed revision again),
	// and rolls back at once any rollout that starts while it is true.
	// A field, not a commit trailer: only whoever may change this policy
	// (its folder's owners) can abort its rollouts.
	Abort bool `json:"abort,omitempty"`
}

// Wave is one step of a rollout.
type Wave struct {
	// Name names the wave in status, diff and events.
	Name string `json:"name"`
	// ClusterAffinity chooses the wave's clusters (names, label and field
	// selectors, exclude), as in a PropagationPolicy's placement.
	ClusterAffinity *policyv1alpha1.ClusterAffinity `json:"clusterAffinity"`
	// MaxConcurrent bounds how many of the wave's clusters take the
	// revision at once (a number or a percentage of the wave, at least
	// one). Default all of them.
	MaxConcurrent *intstr.IntOrString `json:"maxConcurrent,omitempty"`
	// SoakTime is how long every cluster of the wave must stay healthy
	// before the next wave opens. Default 0.
	SoakTime *metav1.Duration `json:"soakTime,omitempty"`
	// Gate, when set, must hold as well for a cluster of the wave to count
	// as healthy.
	Gate *Gate `json:"gate,omitempty"`
}

// Gate is a check beyond the objects' health.
type Gate struct {
	// Prometheus is a query to the Prometheus server the controller is
	// given (--rollout-prometheus-url; never from Git), written like an
	// alert's expression: the cluster is not healthy while it returns any
	// sample. "{{cluster}}" in it stands for the cluster's name.
	Prometheus *PrometheusGate `json:"prometheus,omitempty"`
}

// PrometheusGate is a Prometheus query.
type PrometheusGate struct {
	Query string `json:"query"`
}

// FailureAction is what a rollout does past its failure budget.
type FailureAction string

const (
	Halt     FailureAction = "Halt"
	Rollback FailureAction = "Rollback"
)

// RestWave names the last wave, of the clusters no wave chooses.
const RestWave = "rest"

// DefaultProgressDeadline applies when a policy sets none.
const DefaultProgressDeadline = 10 * time.Minute

// Deadline returns the progress deadline, defaulted.
func (s *Spec) Deadline() time.Duration {
	if s.ProgressDeadline == nil || s.ProgressDeadline.Duration <= 0 {
		return DefaultProgressDeadline
	}
	return s.ProgressDeadline.Duration
}

// Action returns the failure action, defaulted.
func (s *Spec) Action() FailureAction {
	if s.OnFailure == "" {
		return Halt
	}
	return s.OnFailure
}

// Soak returns the wave's soak time, defaulted.
func (w *Wave) Soak() time.Duration {
	if w.SoakTime == nil || w.SoakTime.Duration < 0 {
		return 0
	}
	return w.SoakTime.Duration
}

// Scaled resolves a number-or-percentage against total: a percentage rounds
// down (up when roundUp), a number is taken as is; def applies when v is nil.
func Scaled(v *intstr.IntOrString, total int, roundUp bool, def int) (int, error) {
	if v == nil {
		return def, nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, roundUp)
	if err != nil {
		return 0, fmt.Errorf("%q: %v", v.String(), err)
	}
	if n < 0 {
		return 0, fmt.Errorf("%q: must not be negative", v.String())
	}
	return n, nil
}

// IsRolloutPolicy reports whether apiVersion and kind name a RolloutPolicy.
func IsRolloutPolicy(apiVersion, kind string) bool {
	return apiVersion == APIVersion && kind == Kind
}
