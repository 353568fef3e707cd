package crstore

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/works"
)

// RolloutsConfigMap is the ConfigMap, in the controller's namespace, that
// keeps the rollouts' state (works.RolloutStates) under the key
// rollouts.json. Member namespaces cannot reach it: an agent's credentials
// read and write its own namespace only.
const RolloutsConfigMap = "propagit-rollouts"

const rolloutsKey = "rollouts.json"

var _ works.RolloutStates = (*Store)(nil)

// PutRollouts implements works.RolloutStates.
func (s *Store) PutRollouts(ctx context.Context, data []byte) error {
	if s.legacy == "" {
		return errNoNamespace
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		err := s.c.Get(ctx, client.ObjectKey{Namespace: s.legacy, Name: RolloutsConfigMap}, cm)
		switch {
		case apierrors.IsNotFound(err):
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.legacy, Name: RolloutsConfigMap},
				Data: map[string]string{rolloutsKey: string(data)}}
			err = s.c.Create(ctx, cm)
		case err == nil:
			cm.Data = map[string]string{rolloutsKey: string(data)}
			err = s.c.Update(ctx, cm)
		}
		if err != nil {
			return fmt.Errorf("failed to write the rollouts (ConfigMap %s/%s): %w", s.legacy, RolloutsConfigMap, err)
		}
		return nil
	})
}

// Rollouts implements works.RolloutStates.
func (s *Store) Rollouts(ctx context.Context) ([]byte, error) {
	if s.legacy == "" {
		return nil, nil
	}
	cm := &corev1.ConfigMap{}
	err := s.c.Get(ctx, client.ObjectKey{Namespace: s.legacy, Name: RolloutsConfigMap}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("failed to read the rollouts (ConfigMap %s/%s): %w", s.legacy, RolloutsConfigMap, err)
	}
	data := cm.Data[rolloutsKey]
	if len(data) > works.MaxRolloutsSize {
		return nil, fmt.Errorf("the rollouts (ConfigMap %s/%s) hold %d bytes, more than %d", s.legacy, RolloutsConfigMap, len(data), works.MaxRolloutsSize)
	}
	if data == "" {
		return nil, nil
	}
	return []byte(data), nil
}
