package render_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/secrets/sealed"
	"github.com/propagit/propagit/internal/secrets/sopstest"
)

const sealedPlain = `apiVersion: v1
kind: Secret
metadata: {name: db, namespace: demo}
data: {password: c2VjcmV0LXZhbHVl}
`

const sealedPolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: db, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: Secret, name: db}
  placement:
    clusterAffinity: {clusterNames: [m1, m2]}
`

func sealedOverride(overriders string) string {
	return `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: db-m2, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: Secret, name: db}
  overrideRules:
  - targetCluster: {clusterNames: [m2]}
    overriders:
` + overriders
}

// TestSealedSecretIsPlacedAndOverriddenByMetadataOnly: an encrypted Secret
// reaches its clusters as ciphertext with the committed document beside
// it; a label override applies; an override of an encrypted value fails
// that cluster with an error naming template, cluster, overrider and path.
func TestSealedSecretIsPlacedAndOverriddenByMetadataOnly(t *testing.T) {
	id := sopstest.NewIdentity()
	doc, err := sopstest.Encrypt([]byte(sealedPlain), sopstest.KubernetesOptions, id.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"clusters.yaml": clusters("m1", "m2"),
		"secret.yaml":   string(doc),
		"pp.yaml":       sealedPolicy,
		"op.yaml": sealedOverride(`      labelsOverrider: [{operator: add, value: {region: eu}}]
`),
	}
	res := renderFiles(t, files, nil)
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %v", res.Errors)
	}
	for _, c := range []string{"m1", "m2"} {
		o := object(t, res, c, "Secret.core/demo/db")
		pw, _, _ := unstructured.NestedString(o.Object, "data", "password")
		if !sealed.IsValue(pw) || !sealed.IsEncrypted(o.Object) {
			t.Errorf("%s: data.password = %q, want ciphertext and the sops section", c, pw)
		}
		if o.GetAnnotations()[workv1alpha1.AnnotationSOPSDocument] != string(doc) {
			t.Errorf("%s: the committed document is not carried as it was", c)
		}
	}
	if got := object(t, res, "m2", "Secret.core/demo/db").GetLabels()["region"]; got != "eu" {
		t.Errorf("m2 label region = %q, want eu", got)
	}

	files["op.yaml"] = sealedOverride(`      plaintext: [{path: /data/password, operator: replace, value: b3RoZXI=}]
`)
	res = renderFiles(t, files, nil)
	if d := cmp.Diff([]string{"Secret.core/demo/db m2 OverridePolicy.policy.karmada.io/demo/db-m2 plaintext /data/password absent"}, errorSummary(res)); d != "" {
		t.Fatalf("errors (-want +got):\n%s", d)
	}
	if msg := res.Errors[0].String(); !strings.Contains(msg, "SOPS-encrypted") {
		t.Errorf("message %q does not say why", msg)
	}
	object(t, res, "m1", "Secret.core/demo/db")
}

// TestSealedLoadRefusesOtherKindsAndSealedMetadata: only Secrets may be
// encrypted, and their metadata must stay readable.
func TestSealedLoadRefusesOtherKindsAndSealedMetadata(t *testing.T) {
	id := sopstest.NewIdentity()
	cm, err := sopstest.Encrypt([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: demo}\ndata: {a: b}\n"),
		sopstest.KubernetesOptions, id.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	all, err := sopstest.Encrypt([]byte(sealedPlain), sopstest.Options{EncryptedRegex: "^(data|name)$"}, id.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ doc, want string }{
		"configmap":   {string(cm), `ConfigMap/demo/c is SOPS-encrypted, but only these kinds may be: Secret`},
		"sealed name": {string(all), "metadata is encrypted"},
	} {
		t.Run(name, func(t *testing.T) {
			err := loadError(t, map[string]string{"clusters.yaml": clusters("m1"), "x.yaml": tc.doc})
			if !strings.Contains(err, tc.want) {
				t.Errorf("load error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// loadError loads files and returns the load error's text ("" without).
func loadError(t *testing.T, files map[string]string) string {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	for name, content := range files {
		if err := fs.WriteFile("/repo/"+name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := load.Load(fs, "/repo"); err != nil {
		return err.Error()
	}
	return ""
}

// TestLintSecrets: a plain Secret is an error only when encryption is
// required; an encrypted one sent to a cluster whose age recipient it
// lacks is an error naming both.
func TestLintSecrets(t *testing.T) {
	a, b := sopstest.NewIdentity(), sopstest.NewIdentity()
	doc, err := sopstest.Encrypt([]byte(sealedPlain), sopstest.KubernetesOptions, a.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	cl := strings.Replace(clusters("m1", "m2"), "name: m2\n", "name: m2\n  annotations: {propagit.io/age-recipient: "+b.Recipient().String()+"}\n", 1)
	cl = strings.Replace(cl, "name: m1\n", "name: m1\n  annotations: {propagit.io/age-recipient: "+a.Recipient().String()+"}\n", 1)
	plain := strings.Replace(sealedPlain, "name: db", "name: plain", 1)
	pol := sealedPolicy + "---\n" + strings.Replace(strings.Replace(sealedPolicy, "name: db", "name: plain", 2), "clusterNames: [m1, m2]", "clusterNames: [m1]", 1)
	files := map[string]string{"clusters.yaml": cl, "secret.yaml": string(doc), "plain.yaml": plain, "pp.yaml": pol}
	set := loadFiles(t, files, nil)
	res := render.Render(render.Input{Set: set, Options: render.DefaultOptions()})
	var got []string
	for _, f := range render.LintWith(set, res, render.LintOptions{RequireEncryptedSecrets: true}) {
		if f.Severity != render.SeverityInfo { // the undeclared namespace demo
			got = append(got, f.String())
		}
	}
	want := []string{
		"plain.yaml:1: error: Secret/demo/plain is not SOPS-encrypted, and --require-encrypted-secrets asks every Secret to be (sops encrypt --age … --encrypted-regex '^(data|stringData)$')",
		"secret.yaml:1: error: Secret/demo/db is sent to cluster m2, which decrypts with " + b.Recipient().String() +
			", but it is encrypted only to " + a.Recipient().String() + ": the member cannot decrypt it",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("lint (-want +got):\n%s", d)
	}
	if fs := render.Lint(set, res); len(fs) != 2 || fs[0].Severity != render.SeverityError {
		t.Errorf("without the option: %v, want only the recipient finding and the undeclared namespace", fs)
	}
}

// TestSealedInKustomizeFolderIsALoadError: kustomize rewrites what it
// builds (order, fields), so the committed document's MAC would not hold
// at apply time; the load says so instead.
func TestSealedInKustomizeFolderIsALoadError(t *testing.T) {
	doc, err := sopstest.Encrypt([]byte(sealedPlain), sopstest.KubernetesOptions, sopstest.NewIdentity().Recipient())
	if err != nil {
		t.Fatal(err)
	}
	got := loadError(t, map[string]string{"clusters.yaml": clusters("m1"), "k/s.yaml": string(doc), "k/kustomization.yaml": "resources: [s.yaml]\n"})
	if !strings.Contains(got, "kustomize rewrites the documents it builds") {
		t.Errorf("load error %q", got)
	}
}
