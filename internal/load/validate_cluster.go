package load

import (
	"k8s.io/apimachinery/pkg/api/validate/content"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
)

// maxClusterName is Karmada's limit: the execution namespace
// "karmada-es-<name>" must still be a valid namespace name.
const maxClusterName = 48

// validateCluster applies Karmada's Cluster validation (semantics §1.6).
func validateCluster(cl *clusterv1alpha1.Cluster) []issue {
	c := &checker{}
	if name := cl.Name; name != "" {
		if len(name) > maxClusterName {
			c.add("metadata.name", "%q is longer than %d characters", name, maxClusterName)
		}
		c.messages("metadata.name", name, content.IsDNS1123Label(name))
	}
	c.oneOf("spec.syncMode", cl.Spec.SyncMode, clusterv1alpha1.SyncModePush, clusterv1alpha1.SyncModePull)
	for i, t := range cl.Spec.Taints {
		p := indexPath("spec.taints", i)
		if c.required(p+".key", t.Key) {
			c.labelKey(p+".key", t.Key)
		}
		c.labelValue(p+".value", t.Value)
		if c.required(p+".effect", string(t.Effect)) {
			c.oneOf(p+".effect", string(t.Effect), taintEffects...)
		}
	}
	if sr := cl.Spec.SecretRef; sr != nil {
		c.required("spec.secretRef.namespace", sr.Namespace)
		c.required("spec.secretRef.name", sr.Name)
	}
	return c.issues
}
