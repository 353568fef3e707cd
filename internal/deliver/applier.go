package deliver

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/apply"
)

// Writer knows how to apply a Work's objects to a member: all of them, or
// only what changed since the Work before it.
type Writer interface {
	Apply(ctx context.Context, desired []*unstructured.Unstructured, inventory []workv1alpha1.ObjectRef) (*apply.Result, error)
	ApplyChanges(ctx context.Context, changed []*unstructured.Unstructured, removed, inventory []workv1alpha1.ObjectRef) (*apply.Result, error)
}

// Checker knows how to compare applied objects with the member and put
// back what drifted.
type Checker interface {
	Check(ctx context.Context, desired []*unstructured.Unstructured, inventory []workv1alpha1.ObjectRef) (*apply.Result, error)
}

// HealthReader knows how to read the health of a member's objects.
type HealthReader interface {
	Health(ctx context.Context, inventory []workv1alpha1.ObjectRef) ([]workv1alpha1.ObjectResult, error)
}

// Watchable knows how the drift watch reaches the member: its config (nil
// when there is none to watch with), REST mapper and field manager.
type Watchable interface {
	Config() *rest.Config
	RESTMapper() meta.RESTMapper
	FieldManager() string
}

// Applier is everything a Syncer does to its member. The push controller
// and the pull agent both hand it an *apply.Manager; only the client
// differs. Appliers are compared by identity (use pointers): a new one
// means new credentials, and the drift watch is rebuilt from it.
type Applier interface {
	Writer
	Checker
	HealthReader
	Watchable
}

var _ Applier = (*apply.Manager)(nil)
