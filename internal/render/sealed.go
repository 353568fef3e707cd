package render

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/override"
	"github.com/propagit/propagit/internal/secrets/sealed"
)

// sealedFailure returns the failure of an override that wrote an encrypted
// value (or the sops section) of a SOPS-encrypted template on cluster: the
// engine never sees those values in plaintext, so it cannot change them,
// and a changed ciphertext would not decrypt. Metadata may be overridden.
// nil when the template is not encrypted or no change touches a sealed
// path.
func sealedFailure(b *Binding, cluster string, obj *unstructured.Unstructured, res override.Result, overrides []load.Override) *RenderError {
	if !sealed.IsEncrypted(b.Template.Object.Object) {
		return nil
	}
	paths := sealed.Paths(b.Template.Object.Object)
	for _, c := range res.Changes {
		hit, ok := sealed.Touches(c.Path, paths)
		if !ok {
			continue
		}
		e := &RenderError{Template: b.Key, Source: b.Template.Source, Cluster: cluster, Policy: c.Policy, Rule: c.Rule,
			Overrider: c.Overrider, Path: c.Path,
			Message: "writes " + hit + " of a SOPS-encrypted " + obj.GetKind() + ": encrypted values can only be changed in Git with sops; overrides may change metadata"}
		for _, o := range overrides {
			if o.Display() == c.Policy {
				e.PolicySource = o.Source
			}
		}
		return e
	}
	key := workv1alpha1.AnnotationSOPSDocument
	if obj.GetAnnotations()[key] != b.Template.Object.GetAnnotations()[key] {
		return &RenderError{Template: b.Key, Source: b.Template.Source, Cluster: cluster, Path: "metadata.annotations",
			Message: "an override removed or changed the " + key + " annotation of a SOPS-encrypted " + obj.GetKind() + "; without it the object cannot be decrypted"}
	}
	return nil
}
