package load

import (
	"net/url"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
)

// maxClusterName is Karmada's limit: the execution namespace
// "karmada-es-<name>" must still be a valid namespace name.
const maxClusterName = 48

// clusterTaintEffects are the effects Karmada's ValidateClusterTaints
// allows on a Cluster: not PreferNoSchedule, which tolerations may still
// name. (Newer Karmada also allows SelectiveNoExecute, which propagit does
// not implement.)
var clusterTaintEffects = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectNoExecute)}

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
	seen := map[string]bool{}
	for i, t := range cl.Spec.Taints {
		p := indexPath("spec.taints", i)
		if k := t.Key + "\x00" + string(t.Effect); seen[k] {
			c.add(p, "another taint has key %q and effect %s: taints must be unique by key and effect", t.Key, t.Effect)
		} else {
			seen[k] = true
		}
		if c.required(p+".key", t.Key) {
			c.labelKey(p+".key", t.Key)
		}
		c.labelValue(p+".value", t.Value)
		if c.required(p+".effect", string(t.Effect)) {
			c.oneOf(p+".effect", string(t.Effect), clusterTaintEffects...)
		}
	}
	for _, ref := range []struct {
		field string
		sr    *clusterv1alpha1.LocalSecretReference
	}{{"spec.secretRef", cl.Spec.SecretRef}, {"spec.impersonatorSecretRef", cl.Spec.ImpersonatorSecretRef}} {
		if ref.sr != nil {
			c.required(ref.field+".namespace", ref.sr.Namespace)
			c.required(ref.field+".name", ref.sr.Name)
		}
	}
	if e := cl.Spec.APIEndpoint; e != "" {
		c.apiEndpoint("spec.apiEndpoint", e)
	}
	if p := cl.Spec.ProxyURL; p != "" {
		if u, err := url.Parse(p); err != nil || !slices.Contains([]string{"http", "https", "socks5"}, u.Scheme) {
			c.add("spec.proxyURL", "%q is not an http, https or socks5 URL", p)
		}
	}
	c.resourceModels("spec.resourceModels", cl.Spec.ResourceModels)
	return c.issues
}

// resourceModelNames are the resources Karmada's resource models may use.
var resourceModelNames = []string{"cpu", "ephemeral-storage", "memory", "storage"}

// resourceModels follows the order-independent rules of Karmada's
// ValidateClusterResourceModels: distinct grades, every grade modelling the
// same resources in the same order, supported names, max above min. (The
// contiguity and first/last bounds depend on the webhook's sorting and are
// not checked.)
func (c *checker) resourceModels(path string, models []clusterv1alpha1.ResourceModel) {
	grades := map[uint]bool{}
	for i, m := range models {
		p := indexPath(path, i)
		if grades[m.Grade] {
			c.add(p+".grade", "%d is used by another model: grades must differ", m.Grade)
		}
		grades[m.Grade] = true
		if i > 0 && len(m.Ranges) != len(models[0].Ranges) {
			c.add(p+".ranges", "models %d resources, the first model %d: every grade must model the same resources", len(m.Ranges), len(models[0].Ranges))
		}
		for j, r := range m.Ranges {
			rp := indexPath(p+".ranges", j)
			if c.required(rp+".name", string(r.Name)) {
				c.oneOf(rp+".name", string(r.Name), resourceModelNames...)
			}
			if i > 0 && j < len(models[0].Ranges) && r.Name != models[0].Ranges[j].Name {
				c.add(rp+".name", "%q differs from the first model's %q: every grade must list the same resources in the same order", r.Name, models[0].Ranges[j].Name)
			}
			if r.Max.Cmp(r.Min) <= 0 {
				c.add(rp+".max", "%s must be greater than min %s", r.Max.String(), r.Min.String())
			}
		}
	}
}

// apiEndpoint follows Karmada's ValidateClusterAPIEndpoint: a URL with a
// host, and no user information, fragment or query.
func (c *checker) apiEndpoint(field, e string) {
	u, err := url.Parse(e)
	switch {
	case err != nil:
		c.add(field, "%q is not a valid URL: %v", e, err)
	case u.Host == "":
		c.add(field, "%q has no host: write it as a URL such as https://10.0.0.1:6443", e)
	case u.User != nil:
		c.add(field, "user information is not permitted in the URL")
	case u.Fragment != "" || u.RawQuery != "":
		c.add(field, "%q: fragments and query parameters are not permitted in the URL", e)
	}
}
