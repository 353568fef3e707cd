package interpret

import "testing"

// BenchmarkInterpretReplica is one GetReplicas call on a Rollout: a fresh
// sandbox, the object converted to Lua, kube.accuratePodRequirements, the
// result converted back.
func BenchmarkInterpretReplica(b *testing.B) {
	in := New(DefaultLimits(), []Customization{customization(&testing.T{}, "argo-rollout", "testdata/rollout.lua.yaml", "argoproj.io/v1alpha1", "Rollout")})
	obj := object(rolloutYAML)
	for b.Loop() {
		if _, _, _, err := in.InterpretReplica(obj); err != nil {
			b.Fatal(err)
		}
	}
}
