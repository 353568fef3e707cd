package testenv

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// WaitServed waits until the apiserver at cfg lists resource (a plural,
// "works") in its discovery of gv. A CRD turns Established before its group
// shows in discovery, and a client whose REST mapper reads discovery in
// between finds no match for the kind: on a loaded machine that gap is
// seconds long.
func WaitServed(ctx context.Context, cfg *rest.Config, gv schema.GroupVersion, resource string) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	for {
		list, err := dc.ServerResourcesForGroupVersion(gv.String())
		if err == nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == resource }) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s of %s not in the apiserver's discovery: %w", resource, gv, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
