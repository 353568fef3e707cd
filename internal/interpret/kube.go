package interpret

import (
	"cmp"
	"slices"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/propagit/propagit/internal/podrequests"
)

// kubeFuncs is Karmada's kube module, what scripts get from
// require("kube").
var kubeFuncs = map[string]lua.LGFunction{
	"resourceAdd":             resourceAdd,
	"accuratePodRequirements": accuratePodRequirements,
	"getPodDependencies":      getPodDependencies,
	"getResourceQuantity":     getResourceQuantity,
}

// resourceAdd sums quantities given as strings: kube.resourceAdd("1", "500m").
func resourceAdd(L *lua.LState) int {
	var sum resource.Quantity
	for i := 1; i <= L.GetTop(); i++ {
		q := quantityArg(L, i)
		sum.Add(q)
	}
	L.Push(lua.LString(sum.String()))
	return 1
}

// getResourceQuantity turns a quantity string into a number.
func getResourceQuantity(L *lua.LState) int {
	q := quantityArg(L, 1)
	f := q.AsApproximateFloat64()
	if f < 0 {
		L.RaiseError("quantity %s is negative", q.String())
	}
	L.Push(lua.LNumber(f))
	return 1
}

func quantityArg(L *lua.LState, i int) resource.Quantity {
	v := L.Get(i)
	if v == lua.LNil {
		return resource.Quantity{}
	}
	q, err := resource.ParseQuantity(L.CheckString(i))
	if err != nil {
		L.ArgError(i, err.Error())
	}
	return q
}

// podTemplateArg reads a pod template table (metadata and spec).
func podTemplateArg(L *lua.LState, i int) *corev1.PodTemplateSpec {
	v, err := fromLua(L.CheckTable(i), nil)
	tmpl := &corev1.PodTemplateSpec{}
	if m, ok := v.(map[string]any); ok && err == nil {
		err = runtime.DefaultUnstructuredConverter.FromUnstructured(m, tmpl)
	}
	if err != nil {
		L.ArgError(i, "not a pod template: "+err.Error())
	}
	return tmpl
}

// accuratePodRequirements returns what one replica of a pod template asks
// for: {resourceRequest = {cpu = "250m", ...}, nodeClaim = {...}}, or nil
// when it asks for nothing (Karmada's GenerateReplicaRequirements).
func accuratePodRequirements(L *lua.LState) int {
	spec := &podTemplateArg(L, 1).Spec
	req := Requirements{ResourceRequest: podrequests.Of(spec), NodeClaim: nodeClaimOf(spec)}
	if req.NodeClaim == nil && req.ResourceRequest == nil {
		L.Push(lua.LNil)
		return 1
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&req)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	L.Push(toLua(L, u))
	return 1
}

func nodeClaimOf(spec *corev1.PodSpec) *NodeClaim {
	c := &NodeClaim{NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		c.HardNodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if c.NodeSelector == nil && c.HardNodeAffinity == nil && len(c.Tolerations) == 0 {
		return nil
	}
	return c
}

// getPodDependencies lists the ConfigMaps, Secrets, ServiceAccount and
// PersistentVolumeClaims a pod template in namespace (default "default")
// refers to, as {apiVersion, kind, namespace, name} tables.
func getPodDependencies(L *lua.LState) int {
	spec := &podTemplateArg(L, 1).Spec
	ns := L.OptString(2, "default")
	t := L.NewTable()
	for _, d := range podDependencies(spec, ns) {
		t.Append(toLua(L, map[string]any{"apiVersion": d.APIVersion, "kind": d.Kind, "namespace": d.Namespace, "name": d.Name}))
	}
	L.Push(t)
	return 1
}

// podDependencies walks a pod spec the way Karmada's
// GetDependenciesFromPodTemplate does, in a stable order: by kind
// (ConfigMap, Secret, ServiceAccount, PersistentVolumeClaim), then name.
func podDependencies(spec *corev1.PodSpec, ns string) []Dependency {
	seen := map[Dependency]bool{}
	add := func(kind, name string) {
		if name != "" {
			seen[Dependency{APIVersion: "v1", Kind: kind, Namespace: ns, Name: name}] = true
		}
	}
	if spec.ServiceAccountName != "default" {
		add("ServiceAccount", spec.ServiceAccountName)
	}
	for _, s := range spec.ImagePullSecrets {
		add("Secret", s.Name)
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			containerDependencies(c.Env, c.EnvFrom, add)
		}
	}
	for _, c := range spec.EphemeralContainers {
		containerDependencies(c.Env, c.EnvFrom, add)
	}
	for _, v := range spec.Volumes {
		volumeDependencies(v, add)
	}
	order := map[string]int{"ConfigMap": 0, "Secret": 1, "ServiceAccount": 2, "PersistentVolumeClaim": 3}
	out := make([]Dependency, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b Dependency) int {
		return cmp.Or(cmp.Compare(order[a.Kind], order[b.Kind]), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func containerDependencies(env []corev1.EnvVar, envFrom []corev1.EnvFromSource, add func(kind, name string)) {
	for _, e := range env {
		if f := e.ValueFrom; f != nil && f.ConfigMapKeyRef != nil {
			add("ConfigMap", f.ConfigMapKeyRef.Name)
		}
		if f := e.ValueFrom; f != nil && f.SecretKeyRef != nil {
			add("Secret", f.SecretKeyRef.Name)
		}
	}
	for _, f := range envFrom {
		if f.ConfigMapRef != nil {
			add("ConfigMap", f.ConfigMapRef.Name)
		}
		if f.SecretRef != nil {
			add("Secret", f.SecretRef.Name)
		}
	}
}

func volumeDependencies(v corev1.Volume, add func(kind, name string)) {
	switch {
	case v.ConfigMap != nil:
		add("ConfigMap", v.ConfigMap.Name)
	case v.Secret != nil:
		add("Secret", v.Secret.SecretName)
	case v.PersistentVolumeClaim != nil:
		add("PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if s.ConfigMap != nil {
				add("ConfigMap", s.ConfigMap.Name)
			}
			if s.Secret != nil {
				add("Secret", s.Secret.Name)
			}
		}
	case v.CSI != nil && v.CSI.NodePublishSecretRef != nil:
		add("Secret", v.CSI.NodePublishSecretRef.Name)
	case v.AzureFile != nil:
		add("Secret", v.AzureFile.SecretName)
	case v.CephFS != nil && v.CephFS.SecretRef != nil:
		add("Secret", v.CephFS.SecretRef.Name)
	case v.RBD != nil && v.RBD.SecretRef != nil:
		add("Secret", v.RBD.SecretRef.Name)
	case v.FlexVolume != nil && v.FlexVolume.SecretRef != nil:
		add("Secret", v.FlexVolume.SecretRef.Name)
	case v.ISCSI != nil && v.ISCSI.SecretRef != nil:
		add("Secret", v.ISCSI.SecretRef.Name)
	}
}
