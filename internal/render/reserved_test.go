package render_test

import (
	"strings"
	"testing"
)

// TestHostileOverrideCannotWriteReservedFields: the relocation attack of
// issue #25 needs an override that hands a plain Secret another team's
// encrypted document (the propagit.io/sops-document annotation and a sops
// section); each such write, and any change of identity or of propagit's
// own labels, is a render error on that cluster naming the policy, and the
// other cluster renders as committed.
func TestHostileOverrideCannotWriteReservedFields(t *testing.T) {
	cases := map[string]struct{ overriders, path string }{
		"sops document annotation": {`      annotationsOverrider:
      - {operator: add, value: {propagit.io/sops-document: "stolen"}}
`, "metadata.annotations[propagit.io/sops-document]"},
		"sops section": {`      plaintext:
      - {path: /sops, operator: add, value: {mac: "ENC[AES256_GCM,data:x,iv:y,tag:z,type:str]"}}
`, "sops"},
		"owner label": {`      labelsOverrider:
      - {operator: add, value: {propagit.io/owner: someone-else}}
`, "metadata.labels[propagit.io/owner]"},
		"namespace": {`      plaintext:
      - {path: /metadata/namespace, operator: replace, value: kube-system}
`, "metadata.namespace"},
		"kind": {`      plaintext:
      - {path: /kind, operator: replace, value: Pod}
`, "kind"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{
				"clusters.yaml": clusters("m1", "m2"),
				"secret.yaml":   sealedPlain,
				"pp.yaml":       sealedPolicy,
				"op.yaml":       sealedOverride(tc.overriders),
			}
			res := renderFiles(t, files, nil)
			if len(res.Errors) != 1 {
				t.Fatalf("errors %v, want one, on m2", errorSummary(res))
			}
			e := res.Errors[0]
			if e.Cluster != "m2" || e.Path != tc.path || e.Policy != "OverridePolicy.policy.karmada.io/demo/db-m2" || e.PolicySource.Path != "op.yaml" {
				t.Errorf("error %+v: want m2, path %s, naming OverridePolicy.policy.karmada.io/demo/db-m2 in op.yaml", e, tc.path)
			}
			if !strings.Contains(e.Message, "only Git sets") {
				t.Errorf("message %q does not say why", e.Message)
			}
			if got := placement(res)["m1"]; len(got) != 1 {
				t.Errorf("m1 got %v, want the Secret as committed", got)
			}
		})
	}
}

// An override may still choose the author's own propagit.io annotations
// per cluster (drift mode, prune).
func TestOverrideMaySetDriftMode(t *testing.T) {
	files := map[string]string{
		"clusters.yaml": clusters("m1", "m2"),
		"secret.yaml":   sealedPlain,
		"pp.yaml":       sealedPolicy,
		"op.yaml": sealedOverride(`      annotationsOverrider:
      - {operator: add, value: {propagit.io/drift: warn}}
`),
	}
	res := renderFiles(t, files, nil)
	if len(res.Errors) != 0 {
		t.Fatalf("errors %v", errorSummary(res))
	}
	if got := object(t, res, "m2", "Secret.core/demo/db").GetAnnotations()["propagit.io/drift"]; got != "warn" {
		t.Errorf("drift annotation on m2 = %q, want warn", got)
	}
}
