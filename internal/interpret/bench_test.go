package interpret

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// BenchmarkInterpretReplica is one GetReplicas call on a Rollout as
// render makes it, through a worker process: the request encoded and
// piped, a fresh sandbox there, the object converted to Lua,
// kube.accuratePodRequirements, the result converted and sent back.
func BenchmarkInterpretReplica(b *testing.B) {
	in := New(DefaultLimits(), []Customization{customization(&testing.T{}, "argo-rollout", "testdata/rollout.lua.yaml", "argoproj.io/v1alpha1", "Rollout")})
	obj := object(rolloutYAML)
	for b.Loop() {
		if _, _, _, err := in.InterpretReplica(obj); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInterpretReplicaInProcess is the same call run in this
// process, as a worker runs it: what the worker costs is the difference.
func BenchmarkInterpretReplicaInProcess(b *testing.B) {
	c := customization(&testing.T{}, "argo-rollout", "testdata/rollout.lua.yaml", "argoproj.io/v1alpha1", "Rollout")
	s := c.Scripts[0]
	for _, x := range c.Scripts {
		if x.Operation == ReplicaResource {
			s = x
		}
	}
	obj := object(rolloutYAML)
	for b.Loop() {
		err := s.callLocal(DefaultLimits(), 2, []any{obj.Object}, func(rets []lua.LValue) error {
			for _, v := range rets {
				if _, err := toResult(v, nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
