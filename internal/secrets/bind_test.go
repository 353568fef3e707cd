package secrets_test

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/secrets"
	"github.com/propagit/propagit/internal/secrets/sopstest"
)

// TestKeyringRefusesARelocatedDocument: the victim's committed document,
// carried by an object of another name, namespace, kind or apiVersion
// (an attacker's plain Secret with the annotation and a sops section
// added by an override), is not decrypted into it; the error names both
// identities and no value.
func TestKeyringRefusesARelocatedDocument(t *testing.T) {
	a := sopstest.NewIdentity()
	doc := encrypt(t, sopstest.KubernetesOptions, a)
	k, err := secrets.NewKeyring(map[string][]byte{"m.agekey": []byte(a.String())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Decrypt(loaded(t, doc)); err != nil {
		t.Fatalf("control: the document in its own object: %v", err)
	}
	for name, edit := range map[string]func(*unstructured.Unstructured){
		"another namespace":   func(o *unstructured.Unstructured) { o.SetNamespace("attacker") },
		"another name":        func(o *unstructured.Unstructured) { o.SetName("stolen") },
		"both":                func(o *unstructured.Unstructured) { o.SetNamespace("attacker"); o.SetName("db") },
		"another apiVersion":  func(o *unstructured.Unstructured) { o.SetAPIVersion("v2") },
		"no namespace at all": func(o *unstructured.Unstructured) { o.SetNamespace("") },
	} {
		t.Run(name, func(t *testing.T) {
			obj := loaded(t, doc)
			edit(obj)
			got, err := k.Decrypt(obj)
			if err == nil {
				pw, _, _ := unstructured.NestedString(got.Object, "data", "password")
				t.Fatalf("decrypted into %s/%s (password decrypted: %v)", obj.GetNamespace(), obj.GetName(), pw == "c2VjcmV0LXZhbHVl")
			}
			if !errors.Is(err, secrets.ErrRelocated) || !strings.Contains(err.Error(), "demo/db") {
				t.Errorf("err = %v, want ErrRelocated naming demo/db", err)
			}
			if strings.Contains(err.Error(), "c2VjcmV0") || strings.Contains(err.Error(), "YWRtaW4") {
				t.Errorf("error quotes a value: %v", err)
			}
		})
	}
}

// TestKeyringBindsANamespacelessDocumentToDefault: a document committed
// without a namespace is loaded into "default" and decrypts only there.
func TestKeyringBindsANamespacelessDocumentToDefault(t *testing.T) {
	a := sopstest.NewIdentity()
	plain := strings.Replace(plainSecret, "  namespace: demo\n", "", 1)
	doc, err := sopstest.Encrypt([]byte(plain), sopstest.KubernetesOptions, a.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	k, err := secrets.NewKeyring(map[string][]byte{"m.agekey": []byte(a.String())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	obj := loaded(t, doc)
	obj.SetNamespace("default")
	if _, err := k.Decrypt(obj); err != nil {
		t.Errorf("in default: %v", err)
	}
	obj.SetNamespace("attacker")
	if _, err := k.Decrypt(obj); !errors.Is(err, secrets.ErrRelocated) {
		t.Errorf("in attacker: err = %v, want ErrRelocated", err)
	}
}

// TestKeyringRefusesAnUnboundableDocument: a document whose identity is
// encrypted, or not a string, cannot be bound to an object, and the error
// does not quote it.
func TestKeyringRefusesAnUnboundableDocument(t *testing.T) {
	a := sopstest.NewIdentity()
	k, err := secrets.NewKeyring(map[string][]byte{"m.agekey": []byte(a.String())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		plain string
		opts  sopstest.Options
	}{
		"encrypted name": {"apiVersion: v1\nkind: Secret\nmetadata: {name: hidden-name, namespace: demo}\ndata: {a: YQ==}\n",
			sopstest.Options{EncryptedRegex: "^(name|data)$"}},
		"numeric namespace": {"apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: 42}\ndata: {a: YQ==}\n",
			sopstest.KubernetesOptions},
	} {
		t.Run(name, func(t *testing.T) {
			doc, err := sopstest.Encrypt([]byte(tc.plain), tc.opts, a.Recipient())
			if err != nil {
				t.Fatal(err)
			}
			obj := loaded(t, doc)
			obj.SetName("db")
			obj.SetNamespace("default")
			_, err = k.Decrypt(obj)
			if !errors.Is(err, secrets.ErrRelocated) || strings.Contains(err.Error(), "hidden-name") {
				t.Errorf("err = %v, want ErrRelocated not quoting the name", err)
			}
		})
	}
}
