package match

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

// Priority is Karmada's implicit priority of a selector match.
type Priority int

// Implicit priorities, lowest first. None means the selector does not match.
const (
	None          Priority = 0
	MatchAll      Priority = 1
	LabelSelector Priority = 2
	Name          Priority = 3
)

// String names the priority the way explain prints it.
func (p Priority) String() string {
	switch p {
	case MatchAll:
		return "kind match"
	case LabelSelector:
		return "labelSelector match"
	case Name:
		return "name match"
	default:
		return "no match"
	}
}

// Selector reports how a single resource selector matches obj. The selector's
// namespace must already be defaulted (a PropagationPolicy's empty namespace
// means its own; a cluster-scoped policy's empty namespace means any).
func Selector(sel policyv1alpha1.ResourceSelector, obj *unstructured.Unstructured) Priority {
	return selector(sel, obj, nil)
}

// selector is Selector with the object's labels read lazily, once per call
// of Selectors (reading them copies the map).
func selector(sel policyv1alpha1.ResourceSelector, obj *unstructured.Unstructured, objLabels *map[string]string) Priority {
	if sel.APIVersion != obj.GetAPIVersion() || sel.Kind != obj.GetKind() {
		return None
	}
	if sel.Namespace != "" && sel.Namespace != obj.GetNamespace() {
		return None
	}
	if sel.Name != "" {
		if sel.Name == obj.GetName() {
			return Name
		}
		return None
	}
	if sel.LabelSelector == nil {
		return MatchAll
	}
	var set map[string]string
	if objLabels != nil {
		if *objLabels == nil {
			*objLabels = obj.GetLabels()
		}
		set = *objLabels
	} else {
		set = obj.GetLabels()
	}
	if !Labels(sel.LabelSelector, set) {
		return None
	}
	return LabelSelector
}

// Labels reports whether set satisfies selector. A selector of matchLabels
// only is checked directly (the common case, and the hot path of a render);
// anything else goes through apimachinery's parser. An invalid selector
// matches nothing.
func Labels(selector *metav1.LabelSelector, set map[string]string) bool {
	if len(selector.MatchExpressions) == 0 {
		for k, v := range selector.MatchLabels {
			if got, ok := set[k]; !ok || got != v {
				return false
			}
		}
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(selector)
	return err == nil && s.Matches(labels.Set(set))
}

// Selectors returns the highest priority over sels; None if none match.
func Selectors(sels []policyv1alpha1.ResourceSelector, obj *unstructured.Unstructured) Priority {
	best := None
	var objLabels map[string]string
	for _, sel := range sels {
		if p := selector(sel, obj, &objLabels); p > best {
			best = p
		}
	}
	return best
}

// DefaultNamespace returns sels with every empty namespace set to ns, as
// Karmada's webhook does for namespaced policies.
func DefaultNamespace(sels []policyv1alpha1.ResourceSelector, ns string) []policyv1alpha1.ResourceSelector {
	out := make([]policyv1alpha1.ResourceSelector, len(sels))
	for i, sel := range sels {
		if sel.Namespace == "" {
			sel.Namespace = ns
		}
		out[i] = sel
	}
	return out
}
