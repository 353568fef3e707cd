package apply

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
)

// workloadKinds are the built-in kinds whose status is reflected, with
// Karmada's default interpreter's choice of fields: the counts.
var workloadKinds = map[string]bool{
	"Deployment.apps": true, "StatefulSet.apps": true, "DaemonSet.apps": true, "ReplicaSet.apps": true, "Job.batch": true,
}

// reflectStatus returns the part of live's status a status record keeps:
// a customization's statusReflection, else a built-in workload's numeric
// status fields; nil for other kinds, on a script error, or when the result
// is larger than workv1alpha1.MaxReflectedStatus.
func reflectStatus(live *unstructured.Unstructured, ip *interpret.Interpreter) *runtime.RawExtension {
	var status map[string]any
	if ip.Script(live, interpret.StatusReflection) != nil {
		var err error
		if status, _, err = ip.InterpretStatus(live); err != nil {
			return nil
		}
	} else {
		gk := live.GroupVersionKind().GroupKind().String()
		if !workloadKinds[gk] {
			return nil
		}
		raw, _, _ := unstructured.NestedMap(live.Object, "status")
		for k, v := range raw {
			switch v.(type) {
			case int64, float64:
				if status == nil {
					status = map[string]any{}
				}
				status[k] = v
			}
		}
	}
	if len(status) == 0 {
		return nil
	}
	data, err := json.Marshal(status)
	if err != nil || len(data) > workv1alpha1.MaxReflectedStatus {
		return nil
	}
	return &runtime.RawExtension{Raw: data}
}
