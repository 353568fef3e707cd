package diff

import (
	"strings"
	"testing"

	"filippo.io/age"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/secrets/sopstest"
)

// sealedSecret returns the encrypted Secret/demo/db as render leaves it.
func sealedSecret(t *testing.T, password string, r *age.X25519Recipient) *unstructured.Unstructured {
	t.Helper()
	doc, err := sopstest.Encrypt([]byte("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: demo}\ndata: {password: "+password+", user: YWRtaW4=}\n"),
		sopstest.KubernetesOptions, r)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := utilyaml.Unmarshal(doc, &obj.Object); err != nil {
		t.Fatal(err)
	}
	obj.SetAnnotations(map[string]string{workv1alpha1.AnnotationSOPSDocument: string(doc)})
	return obj
}

// TestSealedSecretChangeNamesKeysWithoutValues: a changed encrypted value
// shows as "encrypted Secret/demo/db changed (keys: password)"; the diff
// holds neither ciphertext, age stanzas nor the committed document.
func TestSealedSecretChangeNamesKeysWithoutValues(t *testing.T) {
	r := sopstest.NewIdentity().Recipient()
	before := sealedSecret(t, "b2xk", r)
	after := before.DeepCopy()
	newer := sealedSecret(t, "bmV3", r)
	after.Object["data"].(map[string]any)["password"] = newer.Object["data"].(map[string]any)["password"]
	after.Object["sops"] = newer.Object["sops"]
	after.SetAnnotations(newer.GetAnnotations())

	rep := Compare(Input{Base: result(map[string][]*unstructured.Unstructured{"m1": {before}}),
		Head: result(map[string][]*unstructured.Unstructured{"m1": {after}})})
	if len(rep.Clusters) != 1 || len(rep.Clusters[0].Objects) != 1 {
		t.Fatalf("report: %+v", rep)
	}
	o := rep.Clusters[0].Objects[0]
	if o.Sealed != "encrypted Secret/demo/db changed (keys: password)" {
		t.Errorf("Sealed = %q", o.Sealed)
	}
	md := rep.Markdown(1 << 20)
	for name, out := range map[string]string{"diff": o.Diff, "markdown": md, "text": rep.Text()} {
		for _, leak := range []string{"ENC[", "AGE ENCRYPTED", "b2xk", "bmV3", "YWRtaW4="} {
			if strings.Contains(out, leak) {
				t.Errorf("%s holds %q:\n%s", name, leak, out)
			}
		}
	}
	if !strings.Contains(md, "encrypted Secret/demo/db changed (keys: password)") {
		t.Errorf("markdown lacks the note:\n%s", md)
	}
	if !strings.Contains(o.Diff, "password: <redacted: changed>") || !strings.Contains(o.Diff, "user: <redacted: unchanged>") {
		t.Errorf("diff:\n%s", o.Diff)
	}
}
