package override

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

// Write is one path one override rule writes in one object for one cluster.
// Two writes with the same Path and SubPath from different rules mean the
// later one overwrites the earlier.
type Write struct {
	// Policy names the policy as messages do (load.Override.Display).
	Policy string
	// Rule is the index in spec.overrideRules; 0 for the deprecated form.
	Rule int
	// Overrider is the overrider's field name, as in Change.
	Overrider string
	// Path is the JSON pointer written in the object.
	Path string
	// SubPath is, for a fieldOverrider, the JSON pointer patched inside the
	// document held at Path; "" otherwise.
	SubPath string
	// Source is where the policy was declared.
	Source load.Source
}

// Writes returns the writes Apply makes to obj for cluster, in the order
// they happen, without modifying obj. A write that leaves the value as it
// was still counts. If Apply fails, Writes returns the writes made before the
// failure and Apply's *RuleError; errors.Is(err, ErrMissingPath) tells a
// path that does not exist in obj.
func Writes(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, policies []load.Override) ([]Write, error) {
	e := &editor{obj: obj.DeepCopy()}
	_, _, err := e.run(cluster, policies)
	var out []Write
	for _, ed := range e.edits {
		w := Write{
			Policy:    ed.Policy,
			Rule:      ed.Rule,
			Overrider: ed.Overrider,
			Path:      ed.Path,
			Source:    ed.source,
		}
		if len(ed.subPaths) == 0 {
			out = append(out, w)
			continue
		}
		for _, sub := range ed.subPaths {
			w.SubPath = sub
			out = append(out, w)
		}
	}
	return out, err
}
