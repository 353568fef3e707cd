package crstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/works"
)

// RecorderHeartbeatLease is the Lease, in the controller's namespace, whose
// renewTime is the recording controller's heartbeat
// (works.RecorderHeartbeats). It carries no replica label, so sharding and
// leader election never take it for one of theirs.
const RecorderHeartbeatLease = "propagit-recorder-heartbeat"

var _ works.RecorderHeartbeats = (*Store)(nil)

// errNoNamespace: a store made without the controller's namespace has
// nowhere to keep the heartbeat.
var errNoNamespace = errors.New("the Work CR store has no controller namespace to keep the recorder's heartbeat and the rollouts in")

// The annotations of the recorder heartbeat's Lease that carry a refused
// source revision (works.RecorderState); absent when the newest revision
// is not refused.
const (
	AnnotationRefusedRevision = "propagit.io/refused-revision"
	AnnotationRefusedSince    = "propagit.io/refused-since"
	AnnotationRefusedReason   = "propagit.io/refused-reason"
)

// PutRecorderHeartbeat implements works.RecorderHeartbeats: the Lease's
// renewTime is the heartbeat, and a refused revision goes in its
// annotations.
func (s *Store) PutRecorderHeartbeat(ctx context.Context, state works.RecorderState) error {
	if s.legacy == "" {
		return errNoNamespace
	}
	state = state.Sanitized()
	renew := metav1.NewMicroTime(state.At)
	annotate := func(l *coordinationv1.Lease) {
		for _, k := range []string{AnnotationRefusedRevision, AnnotationRefusedSince, AnnotationRefusedReason} {
			delete(l.Annotations, k)
		}
		if !state.Refused() {
			return
		}
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		l.Annotations[AnnotationRefusedRevision] = state.RefusedRevision
		l.Annotations[AnnotationRefusedSince] = state.RefusedSince.Format(time.RFC3339)
		l.Annotations[AnnotationRefusedReason] = state.RefusedReason
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l := &coordinationv1.Lease{}
		err := s.c.Get(ctx, client.ObjectKey{Namespace: s.legacy, Name: RecorderHeartbeatLease}, l)
		switch {
		case apierrors.IsNotFound(err):
			l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: s.legacy, Name: RecorderHeartbeatLease},
				Spec: coordinationv1.LeaseSpec{RenewTime: &renew}}
			annotate(l)
			err = s.c.Create(ctx, l)
		case err == nil:
			l.Spec.RenewTime = &renew
			annotate(l)
			err = s.c.Update(ctx, l)
		}
		if err != nil {
			return fmt.Errorf("failed to write the recorder heartbeat (Lease %s/%s): %w", s.legacy, RecorderHeartbeatLease, err)
		}
		return nil
	})
}

// RecorderHeartbeat implements works.RecorderHeartbeats.
func (s *Store) RecorderHeartbeat(ctx context.Context) (works.RecorderState, error) {
	if s.legacy == "" {
		return works.RecorderState{}, nil
	}
	l := &coordinationv1.Lease{}
	err := s.c.Get(ctx, client.ObjectKey{Namespace: s.legacy, Name: RecorderHeartbeatLease}, l)
	switch {
	case apierrors.IsNotFound(err):
		return works.RecorderState{}, nil
	case err != nil:
		return works.RecorderState{}, fmt.Errorf("failed to read the recorder heartbeat (Lease %s/%s): %w", s.legacy, RecorderHeartbeatLease, err)
	case l.Spec.RenewTime == nil:
		return works.RecorderState{}, nil
	}
	state := works.RecorderState{At: l.Spec.RenewTime.Time, RefusedRevision: l.Annotations[AnnotationRefusedRevision],
		RefusedReason: l.Annotations[AnnotationRefusedReason]}
	state.RefusedSince, _ = time.Parse(time.RFC3339, l.Annotations[AnnotationRefusedSince])
	return state.Sanitized(), nil
}
