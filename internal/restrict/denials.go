package restrict

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var admissionKinds = map[string]bool{
	"MutatingWebhookConfiguration.admissionregistration.k8s.io":     true,
	"ValidatingWebhookConfiguration.admissionregistration.k8s.io":   true,
	"MutatingAdmissionPolicy.admissionregistration.k8s.io":          true,
	"MutatingAdmissionPolicyBinding.admissionregistration.k8s.io":   true,
	"ValidatingAdmissionPolicy.admissionregistration.k8s.io":        true,
	"ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io": true,
}

// builtinSubjects are the built-in groups and users a binding must not
// grant to: every caller, every anonymous caller, every service account,
// the superuser group.
var builtinSubjects = map[string]bool{
	"Group/system:authenticated":   true,
	"Group/system:unauthenticated": true,
	"Group/system:serviceaccounts": true,
	"Group/system:masters":         true,
	"User/system:anonymous":        true,
}

// adminBinding refuses a binding of cluster-admin, or of anything to a
// built-in group or user.
func adminBinding(obj *unstructured.Unstructured) *Refusal {
	switch groupKind(obj) {
	case "ClusterRoleBinding.rbac.authorization.k8s.io", "RoleBinding.rbac.authorization.k8s.io":
	default:
		return nil
	}
	if name, _, _ := unstructured.NestedString(obj.Object, "roleRef", "name"); name == "cluster-admin" {
		return &Refusal{Rule: DenyAdminBindings, Path: "roleRef.name", Message: fmt.Sprintf("%s grants cluster-admin; "+
			"the restriction policy denies it unless it allows %q", obj.GetKind(), DenyAdminBindings)}
	}
	subjects, _, _ := unstructured.NestedSlice(obj.Object, "subjects")
	for i, s := range subjects {
		m, _ := s.(map[string]any)
		kind, _ := m["kind"].(string)
		name, _ := m["name"].(string)
		if builtinSubjects[kind+"/"+name] {
			return &Refusal{Rule: DenyAdminBindings, Path: fmt.Sprintf("subjects[%d]", i), Message: fmt.Sprintf("%s grants to the built-in %s %s; "+
				"the restriction policy denies it unless it allows %q", obj.GetKind(), kind, name, DenyAdminBindings)}
		}
	}
	return nil
}

// podSpecPaths are where the pod spec of each workload kind lives.
var podSpecPaths = map[string][]string{
	"Pod":                   {"spec"},
	"Deployment.apps":       {"spec", "template", "spec"},
	"StatefulSet.apps":      {"spec", "template", "spec"},
	"DaemonSet.apps":        {"spec", "template", "spec"},
	"ReplicaSet.apps":       {"spec", "template", "spec"},
	"ReplicationController": {"spec", "template", "spec"},
	"Job.batch":             {"spec", "template", "spec"},
	"CronJob.batch":         {"spec", "jobTemplate", "spec", "template", "spec"},
}

// privilegedPod refuses a pod spec that shares a host namespace, mounts a
// host path or runs a privileged container.
func privilegedPod(obj *unstructured.Unstructured) *Refusal {
	at, ok := podSpecPaths[groupKind(obj)]
	if !ok {
		return nil
	}
	spec, found, _ := unstructured.NestedMap(obj.Object, at...)
	if !found {
		return nil
	}
	refuse := func(field, what string) *Refusal {
		return &Refusal{Rule: DenyPrivilegedSystemPods, Path: joinPath(at) + "." + field, Message: fmt.Sprintf(
			"%s in the system namespace %s %s; the restriction policy denies it unless it allows %q",
			obj.GetKind(), obj.GetNamespace(), what, DenyPrivilegedSystemPods)}
	}
	for _, host := range []string{"hostPID", "hostIPC", "hostNetwork"} {
		if v, _ := spec[host].(bool); v {
			return refuse(host, "shares the host's "+host[4:]+" namespace")
		}
	}
	volumes, _ := spec["volumes"].([]any)
	for i, v := range volumes {
		if m, _ := v.(map[string]any); m["hostPath"] != nil {
			return refuse(fmt.Sprintf("volumes[%d].hostPath", i), "mounts a host path")
		}
	}
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		cs, _ := spec[list].([]any)
		for i, c := range cs {
			m, _ := c.(map[string]any)
			if p, _, _ := unstructured.NestedBool(m, "securityContext", "privileged"); p {
				return refuse(fmt.Sprintf("%s[%d].securityContext.privileged", list, i), "runs a privileged container")
			}
		}
	}
	return nil
}

func joinPath(p []string) string {
	out := ""
	for i, s := range p {
		if i > 0 {
			out += "."
		}
		out += s
	}
	return out
}
