package apply

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"filippo.io/age"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/secrets"
	"github.com/propagit/propagit/internal/secrets/sopstest"
)

// sealedSecret returns the Secret ns/name holding password, encrypted to
// recipients and stamped as render leaves it: ciphertext plus the
// committed document.
func sealedSecret(t *testing.T, ns, name, password string, recipients ...*age.X25519Recipient) *unstructured.Unstructured {
	t.Helper()
	plain := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\ndata: {password: %s}\n",
		name, ns, base64.StdEncoding.EncodeToString([]byte(password)))
	doc, err := sopstest.Encrypt([]byte(plain), sopstest.KubernetesOptions, recipients...)
	if err != nil {
		t.Fatal(err)
	}
	u := managed(obj(t, string(doc)), "abort")
	ann := u.GetAnnotations()
	ann[workv1alpha1.AnnotationSOPSDocument] = string(doc)
	u.SetAnnotations(ann)
	return u
}

func keyringOf(t *testing.T, id *age.X25519Identity) *secrets.Keyring {
	t.Helper()
	k, err := secrets.NewKeyring(map[string][]byte{"member.agekey": []byte(id.String())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func managerWithKeys(t *testing.T, d Decrypter) *Manager {
	t.Helper()
	m := newTestManager(t)
	if d != nil {
		m.UseKeys(d)
	}
	return m
}

// TestSecretsDecryptedJustBeforeApply: an encrypted Secret is applied
// decrypted, without the sops section or the committed document; a Secret
// this member has no key for, or whose ciphertext was tampered with, fails
// alone (naming recipients or the MAC, never the value) and keeps its
// current value on the member, while the other objects are applied; a
// re-apply of the same ciphertext changes nothing, and a changed value on
// the member is drift put back.
func TestSecretsDecryptedJustBeforeApply(t *testing.T) {
	mine, other := sopstest.NewIdentity(), sopstest.NewIdentity()
	m, c, ns := managerWithKeys(t, keyringOf(t, mine)), plainClient(t), uniqueNS("secrets")

	db := sealedSecret(t, ns, "db", "s3cret-one", mine.Recipient(), other.Recipient())
	res := mustApply(t, m, []*unstructured.Unstructured{db, configMap(t, ns, "conf", "a")}, nil)
	assertActions(t, res, map[string]workv1alpha1.Action{"Secret/" + ns + "/db": workv1alpha1.ActionCreated, "ConfigMap/" + ns + "/conf": workv1alpha1.ActionCreated})
	got := live(t, c, db)
	if pw, _, _ := unstructured.NestedString(got.Object, "data", "password"); pw != "czNjcmV0LW9uZQ==" {
		t.Fatalf("live data.password = %q, want base64 of the plaintext", pw)
	}
	if _, ok := got.Object["sops"]; ok || got.GetAnnotations()[workv1alpha1.AnnotationSOPSDocument] != "" {
		t.Fatalf("the sops section or the committed document reached the member: %v", got.GetAnnotations())
	}

	again := mustApply(t, m, []*unstructured.Unstructured{db, configMap(t, ns, "conf", "a")}, res.Inventory)
	assertActions(t, again, map[string]workv1alpha1.Action{"Secret/" + ns + "/db": workv1alpha1.ActionUnchanged, "ConfigMap/" + ns + "/conf": workv1alpha1.ActionUnchanged})

	// Drift: someone changes the value on the member; the check puts it back.
	got.Object["data"] = map[string]any{"password": "b3RoZXI="}
	if err := c.Update(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	drift, err := m.Check(t.Context(), []*unstructured.Unstructured{db}, again.Inventory)
	if err != nil || len(drift.Drift) != 1 || !drift.Drift[0].Corrected {
		t.Fatalf("Check: %v, drift %+v, want one corrected drift", err, drift.Drift)
	}
	if pw, _, _ := unstructured.NestedString(live(t, c, db).Object, "data", "password"); pw != "czNjcmV0LW9uZQ==" {
		t.Fatalf("after the drift check data.password = %q", pw)
	}

	onlyOther := sealedSecret(t, ns, "db", "s3cret-two", other.Recipient())
	tampered := sealedSecret(t, ns, "db", "s3cret-two", mine.Recipient())
	ann := tampered.GetAnnotations()
	ann[workv1alpha1.AnnotationSOPSDocument] = strings.Replace(ann[workv1alpha1.AnnotationSOPSDocument], "name: db", "name: dc", 1)
	tampered.SetAnnotations(ann)
	for name, tc := range map[string]struct {
		obj  *unstructured.Unstructured
		want []string
	}{
		"missing key": {onlyOther, []string{"no matching decryption key", other.Recipient().String(), mine.Recipient().String()}},
		"tampered":    {tampered, []string{"MAC mismatch"}},
	} {
		t.Run(name, func(t *testing.T) {
			res := mustApply(t, m, []*unstructured.Unstructured{tc.obj, configMap(t, ns, "conf", name)}, again.Inventory)
			assertActions(t, res, map[string]workv1alpha1.Action{"Secret/" + ns + "/db": workv1alpha1.ActionFailed, "ConfigMap/" + ns + "/conf": workv1alpha1.ActionConfigured})
			msg := messageOf(res, "Secret/"+ns+"/db")
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not contain %q", msg, w)
				}
			}
			if strings.Contains(msg, "s3cret") || strings.Contains(msg, "czNjcmV0") {
				t.Errorf("message leaks the value: %q", msg)
			}
			if pw, _, _ := unstructured.NestedString(live(t, c, db).Object, "data", "password"); pw != "czNjcmV0LW9uZQ==" {
				t.Errorf("the member's Secret changed to %q, want its previous value", pw)
			}
			if !containsRef(res.Inventory, "Secret", "db") {
				t.Errorf("the Secret left the inventory: %v", res.Inventory)
			}
		})
	}

	// stringData is applied as the data the member stores, so a re-apply
	// is Unchanged and not drift.
	sdPlain := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: sd, namespace: %s}\nstringData: {token: plain-token}\n", ns)
	sdDoc, err := sopstest.Encrypt([]byte(sdPlain), sopstest.KubernetesOptions, mine.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	sd := managed(obj(t, string(sdDoc)), "abort")
	ann = sd.GetAnnotations()
	ann[workv1alpha1.AnnotationSOPSDocument] = string(sdDoc)
	sd.SetAnnotations(ann)
	first := mustApply(t, m, []*unstructured.Unstructured{sd}, nil)
	second := mustApply(t, m, []*unstructured.Unstructured{sd}, first.Inventory)
	assertActions(t, second, map[string]workv1alpha1.Action{"Secret/" + ns + "/sd": workv1alpha1.ActionUnchanged})
	if tok, _, _ := unstructured.NestedString(live(t, c, sd).Object, "data", "token"); tok != base64.StdEncoding.EncodeToString([]byte("plain-token")) {
		t.Errorf("stringData token on the member = %q", tok)
	}

	noKeys := mustApply(t, managerWithKeys(t, nil), []*unstructured.Unstructured{db}, again.Inventory)
	if msg := messageOf(noKeys, "Secret/"+ns+"/db"); !strings.Contains(msg, "no decryption key is configured") {
		t.Errorf("without a keyring: %q", msg)
	}
}

func containsRef(inv []workv1alpha1.ObjectRef, kind, name string) bool {
	for _, r := range inv {
		if r.Kind == kind && r.Name == name {
			return true
		}
	}
	return false
}
