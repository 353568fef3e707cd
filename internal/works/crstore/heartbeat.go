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

// PutRecorderHeartbeat implements works.RecorderHeartbeats.
func (s *Store) PutRecorderHeartbeat(ctx context.Context, at time.Time) error {
	if s.legacy == "" {
		return errNoNamespace
	}
	renew := metav1.NewMicroTime(at)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l := &coordinationv1.Lease{}
		err := s.c.Get(ctx, client.ObjectKey{Namespace: s.legacy, Name: RecorderHeartbeatLease}, l)
		switch {
		case apierrors.IsNotFound(err):
			l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: s.legacy, Name: RecorderHeartbeatLease},
				Spec: coordinationv1.LeaseSpec{RenewTime: &renew}}
			err = s.c.Create(ctx, l)
		case err == nil:
			l.Spec.RenewTime = &renew
			err = s.c.Update(ctx, l)
		}
		if err != nil {
			return fmt.Errorf("failed to write the recorder heartbeat (Lease %s/%s): %w", s.legacy, RecorderHeartbeatLease, err)
		}
		return nil
	})
}

// RecorderHeartbeat implements works.RecorderHeartbeats.
func (s *Store) RecorderHeartbeat(ctx context.Context) (time.Time, error) {
	if s.legacy == "" {
		return time.Time{}, nil
	}
	l := &coordinationv1.Lease{}
	err := s.c.Get(ctx, client.ObjectKey{Namespace: s.legacy, Name: RecorderHeartbeatLease}, l)
	switch {
	case apierrors.IsNotFound(err):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("failed to read the recorder heartbeat (Lease %s/%s): %w", s.legacy, RecorderHeartbeatLease, err)
	case l.Spec.RenewTime == nil:
		return time.Time{}, nil
	}
	return l.Spec.RenewTime.Time, nil
}
