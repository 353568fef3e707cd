// Package events records Kubernetes Events on the Work custom resources of
// the hub, so `kubectl describe work member1` and `kubectl get events` tell
// what happened to a member: applied, failed, drift corrected, failover,
// render errors, held prunes. It wraps client-go's event broadcaster, which
// aggregates repeats and rate-limits.
package events

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// Component is the source of every Event propagit records.
const Component = "propagit"

// Recorder records Events about the Work of a cluster, in the cluster's
// hub namespace beside its Work.
type Recorder struct {
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
}

// New returns a Recorder writing Events to the hub at cfg, about the Works
// of the CR store (workv1alpha1.MemberNamespace).
func New(cfg *rest.Config) (*Recorder, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	b := record.NewBroadcaster()
	// Events(""): each Event goes to its Work's namespace.
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	return &Recorder{broadcaster: b,
		recorder: b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: Component})}, nil
}

// Event records one Event on cluster's Work: eventType is corev1's Normal
// or Warning, reason one of workv1alpha1's Event reasons.
func (r *Recorder) Event(cluster, eventType, reason, message string) {
	if r == nil {
		return
	}
	ns, err := workv1alpha1.MemberNamespace(cluster)
	if err != nil {
		return // no such Work: the CR store refuses the name
	}
	ref := &corev1.ObjectReference{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "Work",
		Namespace: ns, Name: cluster}
	r.recorder.Event(ref, eventType, reason, message)
}

// Stop flushes and stops the broadcaster.
func (r *Recorder) Stop() {
	if r != nil {
		r.broadcaster.Shutdown()
	}
}
