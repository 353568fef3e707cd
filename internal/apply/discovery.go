package apply

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// discoveryInterval is how often the client's REST mapper is asked for the
// kinds of a new CRD. A CRD is Established a little before the apiserver's
// discovery serves its kinds; each attempt costs one discovery request.
const discoveryInterval = 100 * time.Millisecond

// waitDiscovery waits until the client can map every served version of the
// CRDs among items that were created or configured, so that the custom
// resources of the next stage do not fail with "no matches for kind". A CRD
// whose kinds never appear within WaitTimeout says so in its message.
func (m *Manager) waitDiscovery(ctx context.Context, items []*item) {
	for _, it := range items {
		if !utils.IsCRD(it.obj) || (it.action != workv1alpha1.ActionCreated && it.action != workv1alpha1.ActionConfigured) {
			continue
		}
		for _, gvk := range servedKinds(it.obj) {
			err := wait.PollUntilContextTimeout(ctx, discoveryInterval, m.opts.WaitTimeout, true,
				func(context.Context) (bool, error) {
					_, err := m.client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
					return err == nil, nil
				})
			if err != nil {
				it.message = fmt.Sprintf("%s is not served yet: %s %s: %v", fmtRef(it.ref), gvk.GroupVersion(), gvk.Kind, err)
				break
			}
		}
	}
}

// servedKinds lists the group, version and kind of every served version of
// a CRD.
func servedKinds(crd *unstructured.Unstructured) []schema.GroupVersionKind {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var out []schema.GroupVersionKind
	for _, v := range versions {
		version, _ := v.(map[string]any)
		name, _ := version["name"].(string)
		if served, _ := version["served"].(bool); served && name != "" {
			out = append(out, schema.GroupVersionKind{Group: group, Version: name, Kind: kind})
		}
	}
	return out
}
