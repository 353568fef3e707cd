// Package configv1alpha1 holds Karmada's config.karmada.io/v1alpha1
// ResourceInterpreterCustomization: Lua scripts that tell propagit how to
// read and write a kind it does not know (a CRD's replicas, health, status
// and dependencies), with Karmada's JSON field names.
package configv1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GroupVersion is the apiVersion of every kind in this package.
const GroupVersion = Group + "/v1alpha1"

// Group is the API group of the kinds in this package, as messages write
// it (ObjectKey.Display).
const Group = "config.karmada.io"

// KindResourceInterpreterCustomization is the kind name.
const KindResourceInterpreterCustomization = "ResourceInterpreterCustomization"

// ResourceInterpreterCustomization describes one kind with Lua scripts. It
// is cluster-scoped.
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ResourceInterpreterCustomizationSpec `json:"spec"`
}

// ResourceInterpreterCustomizationSpec names the kind and its scripts.
type ResourceInterpreterCustomizationSpec struct {
	Target         CustomizationTarget `json:"target"`
	Customizations CustomizationRules  `json:"customizations"`
}

// CustomizationTarget is the exact apiVersion and kind the scripts describe.
type CustomizationTarget struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// CustomizationRules holds one script per operation; each is optional.
type CustomizationRules struct {
	Retention                *LuaScript `json:"retention,omitempty"`
	ReplicaResource          *LuaScript `json:"replicaResource,omitempty"`
	ComponentResource        *LuaScript `json:"componentResource,omitempty"`
	ReplicaRevision          *LuaScript `json:"replicaRevision,omitempty"`
	StatusReflection         *LuaScript `json:"statusReflection,omitempty"`
	StatusAggregation        *LuaScript `json:"statusAggregation,omitempty"`
	HealthInterpretation     *LuaScript `json:"healthInterpretation,omitempty"`
	DependencyInterpretation *LuaScript `json:"dependencyInterpretation,omitempty"`
}

// LuaScript is the shape every Karmada rule shares (LocalValueRetention,
// ReplicaResourceRequirement, ReplicaRevision, ...): one script defining
// the operation's Lua function.
type LuaScript struct {
	LuaScript string `json:"luaScript"`
}
