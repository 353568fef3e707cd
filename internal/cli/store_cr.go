package cli

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/works/crstore"
)

// newCRStores builds the Work CR store on the hub.
func newCRStores(hub client.Client, namespace string, heartbeat time.Duration) (*stores, error) {
	var opts []crstore.Option
	if heartbeat > 0 {
		opts = append(opts, crstore.WithHeartbeatInterval(heartbeat))
	}
	cr := crstore.New(hub, namespace, opts...)
	return &stores{works: cr, status: cr, hub: hub}, nil
}
