package interpret

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Customization is one ResourceInterpreterCustomization, compiled.
type Customization struct {
	Name       string
	APIVersion string
	Kind       string
	Scripts    []*Script
}

// Interpreter answers, for the kinds that have customizations, what
// Karmada's configurable interpreter answers. Safe for concurrent use.
type Interpreter struct {
	limits  Limits
	targets map[string]*rules
	sum     [sha256.Size]byte
}

// rules are the scripts of one target kind: per operation the script of
// the customization first by name (Karmada merges customizations sorted by
// name and keeps the first script of each operation), and every
// dependency script (Karmada runs them all and joins the results).
type rules struct {
	first  map[Operation]*Script
	deps   []*Script
	digest [sha256.Size]byte
}

// CheckTarget refuses a target kind scripts may not see: v1 Secret.
// Karmada allows a customization for Secrets; propagit does not, because
// the object a script gets would hold decrypted values (SOPS documents
// are decrypted into Secrets on members), and a script can return or
// raise them into places others read.
func CheckTarget(apiVersion, kind string) error {
	if apiVersion == "v1" && kind == "Secret" {
		return fmt.Errorf("scripts may not target v1 Secret: they would see its decrypted values")
	}
	return nil
}

// New builds an Interpreter from customizations, in any order. One whose
// target CheckTarget refuses is left out (the loader reports it).
func New(limits Limits, customizations []Customization) *Interpreter {
	sorted := slices.Clone(customizations)
	slices.SortStableFunc(sorted, func(a, b Customization) int { return strings.Compare(a.Name, b.Name) })
	in := &Interpreter{limits: limits, targets: map[string]*rules{}}
	hashes := map[string][]string{}
	for _, c := range sorted {
		if CheckTarget(c.APIVersion, c.Kind) != nil {
			continue
		}
		key := c.APIVersion + "/" + c.Kind
		r := in.targets[key]
		if r == nil {
			r = &rules{first: map[Operation]*Script{}}
			in.targets[key] = r
		}
		for _, s := range c.Scripts {
			if s.Operation == DependencyInterpretation {
				r.deps = append(r.deps, s)
			} else if r.first[s.Operation] == nil {
				r.first[s.Operation] = s
			}
			hashes[key] = append(hashes[key], c.Name, string(s.Operation), s.Source)
		}
	}
	all := sha256.New()
	for _, key := range slices.Sorted(maps.Keys(hashes)) {
		r := in.targets[key]
		r.digest = sha256.Sum256([]byte(strings.Join(hashes[key], "\x00")))
		all.Write([]byte(key + "\x00"))
		all.Write(r.digest[:])
	}
	all.Sum(in.sum[:0])
	return in
}

// Sum identifies every script of every kind (what Digest tells apart for
// all objects at once).
func (in *Interpreter) Sum() [sha256.Size]byte {
	if in == nil {
		return [sha256.Size]byte{}
	}
	return in.sum
}

func (in *Interpreter) rules(obj *unstructured.Unstructured) *rules {
	if in == nil || obj == nil || len(in.targets) == 0 || CheckTarget(obj.GetAPIVersion(), obj.GetKind()) != nil {
		return nil
	}
	return in.targets[obj.GetAPIVersion()+"/"+obj.GetKind()]
}

// Script returns the script that decides op for obj's kind; nil when no
// customization has one (the built-in interpreter decides).
func (in *Interpreter) Script(obj *unstructured.Unstructured, op Operation) *Script {
	r := in.rules(obj)
	if r == nil {
		return nil
	}
	if op == DependencyInterpretation && len(r.deps) > 0 {
		return r.deps[0]
	}
	return r.first[op]
}

// Digest identifies the scripts of obj's kind (zero when it has none), so
// a memo of rendered objects can tell when they changed.
func (in *Interpreter) Digest(obj *unstructured.Unstructured) [sha256.Size]byte {
	if r := in.rules(obj); r != nil {
		return r.digest
	}
	return [sha256.Size]byte{}
}

// Requirements is what one replica asks of a cluster (Karmada's
// ReplicaRequirements).
type Requirements struct {
	NodeClaim         *NodeClaim          `json:"nodeClaim,omitempty"`
	ResourceRequest   corev1.ResourceList `json:"resourceRequest,omitempty"`
	Namespace         string              `json:"namespace,omitempty"`
	PriorityClassName string              `json:"priorityClassName,omitempty"`
}

// NodeClaim is the node constraints of a replica.
type NodeClaim struct {
	HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`
	NodeSelector     map[string]string    `json:"nodeSelector,omitempty"`
	Tolerations      []corev1.Toleration  `json:"tolerations,omitempty"`
}

// Dependency is an object a template needs on its clusters (Karmada's
// DependentObjectReference).
type Dependency struct {
	APIVersion    string                `json:"apiVersion"`
	Kind          string                `json:"kind"`
	Namespace     string                `json:"namespace,omitempty"`
	Name          string                `json:"name,omitempty"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// StatusItem is one member's status of a template, what AggregateStatus
// scripts read (Karmada's AggregatedStatusItem).
type StatusItem struct {
	ClusterName    string         `json:"clusterName"`
	Status         map[string]any `json:"status,omitempty"`
	Applied        bool           `json:"applied,omitempty"`
	AppliedMessage string         `json:"appliedMessage,omitempty"`
	Health         string         `json:"health,omitempty"`
}

// InterpretReplica runs GetReplicas: the template's desired replicas and
// what each asks for. The script is nil when obj's kind has no
// replicaResource customization.
func (in *Interpreter) InterpretReplica(obj *unstructured.Unstructured) (int32, *Requirements, *Script, error) {
	s := in.Script(obj, ReplicaResource)
	if s == nil {
		return 0, nil, nil, nil
	}
	var replicas int32
	var req *Requirements
	err := s.call(in.limits, 2, []any{obj.Object}, func(rets []result) error {
		n, err := rets[0].number()
		if rets[0].Type != "number" || err != nil || n < 0 || n > math.MaxInt32 || n != math.Trunc(n) {
			return fmt.Errorf("replicas %s, want a whole number from 0 to %d", rets[0], math.MaxInt32)
		}
		replicas = int32(n)
		if rets[1].Type == "nil" {
			return nil
		}
		req = &Requirements{}
		return rets[1].decode(req)
	})
	return replicas, req, s, err
}

// ReviseReplica runs ReviseReplica: obj with replicas written where its kind
// keeps them. The result is a new object; obj is not changed.
func (in *Interpreter) ReviseReplica(obj *unstructured.Unstructured, replicas int32) (*unstructured.Unstructured, *Script, error) {
	return in.object(obj, ReplicaRevision, obj.Object, int64(replicas))
}

// Retain runs Retain: desired with the fields a member owns taken from
// observed, the copy running there.
func (in *Interpreter) Retain(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, *Script, error) {
	return in.object(desired, Retention, desired.Object, observed.Object)
}

// AggregateStatus runs AggregateStatus: obj with the members' statuses
// folded into its own.
func (in *Interpreter) AggregateStatus(obj *unstructured.Unstructured, items []StatusItem) (*unstructured.Unstructured, *Script, error) {
	list := make([]any, len(items))
	for i, it := range items {
		m := map[string]any{"clusterName": it.ClusterName, "applied": it.Applied}
		if it.Status != nil {
			m["status"] = it.Status
		}
		if it.AppliedMessage != "" {
			m["appliedMessage"] = it.AppliedMessage
		}
		if it.Health != "" {
			m["health"] = it.Health
		}
		list[i] = m
	}
	return in.object(obj, StatusAggregation, obj.Object, list)
}

// object runs an operation whose result is a whole object (resultRef
// tells empty maps from empty lists in it).
func (in *Interpreter) object(obj *unstructured.Unstructured, op Operation, args ...any) (*unstructured.Unstructured, *Script, error) {
	s := in.Script(obj, op)
	if s == nil {
		return nil, nil, nil
	}
	var out *unstructured.Unstructured
	err := s.call(in.limits, 1, args, func(rets []result) error {
		m, err := objectResult(rets[0])
		out = &unstructured.Unstructured{Object: m}
		return err
	})
	return out, s, err
}

// InterpretStatus runs ReflectStatus: the part of a member's copy that is
// reported as its status.
func (in *Interpreter) InterpretStatus(observed *unstructured.Unstructured) (map[string]any, *Script, error) {
	s := in.Script(observed, StatusReflection)
	if s == nil {
		return nil, nil, nil
	}
	var status map[string]any
	err := s.call(in.limits, 1, []any{observed.Object}, func(rets []result) error {
		if rets[0].Type == "nil" {
			return nil
		}
		var err error
		status, err = objectResult(rets[0])
		return err
	})
	return status, s, err
}

// InterpretHealth runs InterpretHealth on a member's copy.
func (in *Interpreter) InterpretHealth(observed *unstructured.Unstructured) (bool, *Script, error) {
	s := in.Script(observed, HealthInterpretation)
	if s == nil {
		return false, nil, nil
	}
	var healthy bool
	err := s.call(in.limits, 1, []any{observed.Object}, func(rets []result) error {
		if rets[0].Type != "boolean" {
			return fmt.Errorf("a %s, want a boolean", rets[0].Type)
		}
		healthy = rets[0].Bool
		return nil
	})
	return healthy, s, err
}

// InterpretDependency runs every GetDependencies script of obj's kind and
// joins their results, without repeats, in order. scripts is empty when
// the kind has none.
func (in *Interpreter) InterpretDependency(obj *unstructured.Unstructured) (deps []Dependency, scripts []*Script, err error) {
	r := in.rules(obj)
	if r == nil {
		return nil, nil, nil
	}
	for _, s := range r.deps {
		var got []Dependency
		err := s.call(in.limits, 1, []any{obj.Object}, func(rets []result) error {
			if rets[0].Type == "nil" {
				return nil
			}
			return rets[0].decode(&got)
		})
		if err != nil {
			return nil, r.deps, err
		}
		for _, d := range got {
			if !slices.ContainsFunc(deps, func(x Dependency) bool { return fmt.Sprint(x) == fmt.Sprint(d) }) {
				deps = append(deps, d)
			}
		}
	}
	return deps, r.deps, nil
}

// mergeRefs overlays b on a: the reference for a result built from two
// objects.
func mergeRefs(a, b any) any {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if a != nil {
			return a
		}
		return b
	}
	out := make(map[string]any, len(am)+len(bm))
	for k, v := range bm {
		out[k] = v
	}
	for k, v := range am {
		out[k] = mergeRefs(v, bm[k])
	}
	return out
}

// objectResult reads a table result as an object.
func objectResult(r result) (map[string]any, error) {
	v, err := r.value()
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a list, want an object")
	}
	return m, nil
}
