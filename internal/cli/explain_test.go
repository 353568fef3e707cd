package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

func TestResolveKind(t *testing.T) {
	gks := []schema.GroupKind{
		{Group: "apps", Kind: "Deployment"}, {Kind: "Service"}, {Group: "networking.k8s.io", Kind: "NetworkPolicy"},
		{Group: "networking.k8s.io", Kind: "Ingress"}, {Kind: "Endpoints"}, {Group: "example.com", Kind: "Widget"},
		{Group: "other.example.com", Kind: "Widget"}, {Group: "example.com", Kind: "Svc"},
	}
	tests := []struct {
		ref  string
		want []string
	}{
		{"deploy", []string{"deployment.apps"}},
		{"Deployment", []string{"deployment.apps"}},
		{"DEPLOYMENT.apps", []string{"deployment.apps"}},
		{"deployments", []string{"deployment.apps"}},
		{"deploy.apps", []string{"deployment.apps"}},
		{"deploy.batch", nil},
		{"networkpolicies", []string{"networkpolicy.networking.k8s.io"}},
		{"netpol", []string{"networkpolicy.networking.k8s.io"}},
		{"ingresses", []string{"ingress.networking.k8s.io"}},
		{"ing", []string{"ingress.networking.k8s.io"}},
		{"endpoints", []string{"endpoints"}},
		{"service.core", []string{"service"}},
		{"widgets", []string{"widget.example.com", "widget.other.example.com"}},
		{"widget.other.example.com", []string{"widget.other.example.com"}},
		// A kind named like a short name is the user's own and wins.
		{"svc", []string{"svc.example.com"}},
		{"po", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, gk := range resolveKind(tt.ref, gks) {
			got = append(got, kindName(gk))
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("resolveKind(%q) (-want +got):\n%s", tt.ref, diff)
		}
	}
}

// explain takes kubectl's spellings of a kind; an ambiguous one lists the
// candidates, a name in another namespace says which.
func TestExplainKindSpellings(t *testing.T) {
	const src = "testdata/lintfleet"
	want, _ := runCLI(t, 0, "explain", "deployment.apps/web", "-n", "shop", "--source", src)
	for _, ref := range []string{"deploy/web", "Deployment/web", "deployments/web", "DEPLOYMENT.apps/web", "deploy.apps/web"} {
		got, _ := runCLI(t, 0, "explain", ref, "-n", "shop", "--source", src)
		if got != want {
			t.Errorf("explain %s differs from explain deployment.apps/web:\n%s", ref, got)
		}
	}
	_, stderr := runCLI(t, 2, "explain", "deploy/web", "--source", src)
	if !strings.Contains(stderr, `no template Deployment.apps/default/web (there is one in shop: pass -n)`) {
		t.Errorf("wrong namespace: %s", stderr)
	}
	_, stderr = runCLI(t, 2, "explain", "svc/web", "-n", "shop", "--source", src)
	if !strings.Contains(stderr, `no template of kind "svc"`) {
		t.Errorf("kind absent from the templates: %s", stderr)
	}

	dir := t.TempDir()
	widget := "apiVersion: %s/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n"
	writeFile(t, filepath.Join(dir, "a.yaml"), fmt.Sprintf(widget, "example.com")+"---\n"+fmt.Sprintf(widget, "other.example.com"))
	_, stderr = runCLI(t, 2, "explain", "widget/w", "--source", dir)
	if !strings.Contains(stderr, "widget/w is ambiguous: widget.example.com/w, widget.other.example.com/w; qualify the kind with its group") {
		t.Errorf("ambiguous kind: %s", stderr)
	}
	runCLI(t, 0, "explain", "widgets.other.example.com/w", "--source", dir)
}
