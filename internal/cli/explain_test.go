package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secretFleet = `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: member1
---
apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
stringData:
  password: git-password-1
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: db
  namespace: shop
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: Secret
    name: db
  placement:
    clusterAffinity:
      clusterNames: [member1]
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata:
  name: db
  namespace: shop
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: Secret
    name: db
  overrideRules:
  - targetCluster:
      clusterNames: [member1]
    overriders:
      plaintext:
      - path: /stringData/password
        operator: replace
        value: member1-password-2
      - path: /metadata/labels
        operator: add
        value: {tier: db}
`

// explain shows what each override wrote; for a Secret, never the values.
func TestExplainRedactsSecretOverrideValues(t *testing.T) {
	src := filepath.Join(t.TempDir(), "fleet")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "all.yaml"), []byte(secretFleet), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json"} {
		stdout, _ := runCLI(t, 0, "explain", "secret/db", "-n", "shop", "--source", src, "-o", format)
		for _, secret := range []string{"git-password-1", "member1-password-2"} {
			if strings.Contains(stdout, secret) {
				t.Errorf("-o %s shows the Secret value %q:\n%s", format, secret, stdout)
			}
		}
		if !strings.Contains(stdout, "/stringData/password") || !strings.Contains(stdout, "redacted: changed") || !strings.Contains(stdout, "tier") {
			t.Errorf("-o %s does not show the changes, redacted where needed:\n%s", format, stdout)
		}
	}
}
