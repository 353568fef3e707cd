package render

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
)

// addDependencies implements propagateDeps: the ConfigMaps, Secrets,
// ServiceAccounts and PersistentVolumeClaims a namespaced workload references
// follow it to its clusters. A dependency with its own policy keeps its own
// placement and gains the referrers' clusters; one without becomes an
// attached binding placed on the union of its referrers' clusters.
func addDependencies(bindings []*Binding, byKey *Index, ip *interpret.Interpreter) {
	for _, b := range bindings {
		if b.Choice.Winner == nil || !b.Choice.Winner.Policy.Policy.Spec.PropagateDeps || b.Key.Namespace == "" {
			continue
		}
		spec := b.Choice.Winner.Policy.Policy.Spec
		keys, custom, err := customDependencies(b.Template.Object, ip)
		if err != nil {
			b.DependencyError = err.Error()
		}
		if !custom {
			keys = dependencies(b.Template.Object)
		}
		for _, dk := range keys {
			dep := byKey.get(dk)
			if dep == nil || dep.Skipped != "" {
				continue // missing dependencies are skipped, as in Karmada
			}
			attach(dep, b, spec)
		}
	}
}

func attach(dep, referrer *Binding, spec policyv1alpha1.PropagationSpec) {
	if !slices.Contains(dep.DependencyOf, referrer.Key.String()) {
		dep.DependencyOf = append(dep.DependencyOf, referrer.Key.String())
		slices.Sort(dep.DependencyOf)
	}
	if dep.Policy == nil && spec.ConflictResolution == policyv1alpha1.ConflictOverwrite {
		dep.Overwrite = true
	}
	targets := slices.Clip(dep.Targets) // an append copies: the targets may be shared
	for _, t := range referrer.Targets {
		if !slices.ContainsFunc(targets, func(x *Target) bool { return x.Cluster == t.Cluster }) {
			targets = append(targets, &Target{Cluster: t.Cluster, Suspended: t.Suspended})
		}
	}
	byCluster := func(a, b *Target) int { return strings.Compare(a.Cluster, b.Cluster) }
	if len(targets) == len(dep.Targets) && !slices.IsSortedFunc(targets, byCluster) {
		targets = slices.Clone(targets) // appended to, targets is a new slice already
	}
	slices.SortFunc(targets, byCluster)
	dep.Targets = targets
}

// detachDependencies drops the dependency targets no referrer targets any
// more: the dependencies of an old copy whose eviction ended go with it.
// Targets of a dependency's own placement stay.
func detachDependencies(bindings []*Binding, byKey *Index) {
	for _, dep := range bindings {
		if len(dep.DependencyOf) == 0 {
			continue
		}
		dep.Targets = slices.DeleteFunc(dep.Targets, func(t *Target) bool {
			return !t.Scheduled && !referred(dep, t.Cluster, byKey)
		})
	}
}

// referred reports whether some referrer of dep targets cluster.
func referred(dep *Binding, cluster string, byKey *Index) bool {
	for _, name := range dep.DependencyOf {
		k, err := workv1alpha1.ParseKey(name)
		if r := byKey.get(k); err == nil && r != nil && slices.ContainsFunc(r.Targets, func(t *Target) bool { return t.Cluster == cluster }) {
			return true
		}
	}
	return false
}

// dependencies lists the objects obj references through its pod spec (or,
// for an Ingress, its TLS secrets), all in obj's namespace.
func dependencies(obj *unstructured.Unstructured) []workv1alpha1.ObjectKey {
	ns := obj.GetNamespace()
	var keys []workv1alpha1.ObjectKey
	add := func(group, kind, name string) {
		if name == "" {
			return
		}
		k := workv1alpha1.ObjectKey{Group: group, Kind: kind, Namespace: ns, Name: name}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if obj.GetKind() == "Ingress" {
		tls, _, _ := unstructured.NestedSlice(obj.Object, "spec", "tls")
		for _, t := range tls {
			if m, ok := t.(map[string]any); ok {
				s, _ := m["secretName"].(string)
				add("", "Secret", s)
			}
		}
		return keys
	}
	pod := podSpec(obj)
	if pod == nil {
		return nil
	}
	if sa, _ := pod["serviceAccountName"].(string); sa != "default" {
		add("", "ServiceAccount", sa)
	}
	for _, ref := range list(pod, "imagePullSecrets") {
		add("", "Secret", str(ref, "name"))
	}
	for _, field := range []string{"initContainers", "containers", "ephemeralContainers"} {
		for _, c := range list(pod, field) {
			containerDeps(c, add)
		}
	}
	claimTemplates := volumeClaimTemplates(obj)
	for _, v := range list(pod, "volumes") {
		volumeDeps(v, claimTemplates, add)
	}
	return keys
}

func containerDeps(c map[string]any, add func(group, kind, name string)) {
	for _, env := range list(c, "env") {
		from, _ := env["valueFrom"].(map[string]any)
		add("", "ConfigMap", str(from, "configMapKeyRef", "name"))
		add("", "Secret", str(from, "secretKeyRef", "name"))
	}
	for _, from := range list(c, "envFrom") {
		add("", "ConfigMap", str(from, "configMapRef", "name"))
		add("", "Secret", str(from, "secretRef", "name"))
	}
}

func volumeDeps(v map[string]any, claimTemplates []string, add func(group, kind, name string)) {
	add("", "ConfigMap", str(v, "configMap", "name"))
	add("", "Secret", str(v, "secret", "secretName"))
	if claim := str(v, "persistentVolumeClaim", "claimName"); !slices.Contains(claimTemplates, claim) {
		add("", "PersistentVolumeClaim", claim)
	}
	for _, src := range list(mapAt(v, "projected"), "sources") {
		add("", "ConfigMap", str(src, "configMap", "name"))
		add("", "Secret", str(src, "secret", "name"))
	}
	for _, plugin := range []string{"azureFile", "cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "iscsi", "storageos"} {
		if plugin == "azureFile" {
			add("", "Secret", str(v, plugin, "secretName"))
			continue
		}
		add("", "Secret", str(v, plugin, "secretRef", "name"))
	}
	add("", "Secret", str(v, "csi", "nodePublishSecretRef", "name"))
}

// podSpec returns the pod spec of the workload kinds Karmada knows.
func podSpec(obj *unstructured.Unstructured) map[string]any {
	path := podSpecPath(obj)
	if path == nil {
		return nil
	}
	m, _, _ := unstructured.NestedMap(obj.Object, path...)
	return m
}

// podSpecPath is where the workload kinds Karmada knows hold their pod
// spec; nil for other kinds.
func podSpecPath(obj *unstructured.Unstructured) []string {
	switch obj.GetKind() {
	case "Pod":
		return []string{"spec"}
	case "Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job":
		return []string{"spec", "template", "spec"}
	case "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template", "spec"}
	}
	return nil
}

func volumeClaimTemplates(obj *unstructured.Unstructured) []string {
	if obj.GetKind() != "StatefulSet" {
		return nil
	}
	var names []string
	vcts, _, _ := unstructured.NestedSlice(obj.Object, "spec", "volumeClaimTemplates")
	for _, v := range vcts {
		if m, ok := v.(map[string]any); ok {
			names = append(names, str(m, "metadata", "name"))
		}
	}
	return names
}

func mapAt(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	return v
}

func list(m map[string]any, key string) []map[string]any {
	items, _ := m[key].([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if im, ok := it.(map[string]any); ok {
			out = append(out, im)
		}
	}
	return out
}

func str(m map[string]any, path ...string) string {
	for i, p := range path {
		if m == nil {
			return ""
		}
		if i == len(path)-1 {
			s, _ := m[p].(string)
			return s
		}
		m, _ = m[p].(map[string]any)
	}
	return ""
}
