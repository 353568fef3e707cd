package secrets_test

import (
	"errors"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/secrets"
	"github.com/propagit/propagit/internal/secrets/sealed"
	"github.com/propagit/propagit/internal/secrets/sopstest"
)

const plainSecret = `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: demo
  labels:
    app: db
type: Opaque
data:
  password: c2VjcmV0LXZhbHVl
  user: YWRtaW4=
stringData:
  port: 5432
  tls: true
  hosts:
  - a.example
  - b.example
`

func encrypt(t *testing.T, opts sopstest.Options, ids ...*age.X25519Identity) []byte {
	t.Helper()
	var rs []*age.X25519Recipient
	for _, id := range ids {
		rs = append(rs, id.Recipient())
	}
	doc, err := sopstest.Encrypt([]byte(plainSecret), opts, rs...)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestDecryptRoundTrip(t *testing.T) {
	a, b := sopstest.NewIdentity(), sopstest.NewIdentity()
	for name, opts := range map[string]sopstest.Options{
		"kubernetes regex":   sopstest.KubernetesOptions,
		"everything":         {},
		"mac only encrypted": {EncryptedRegex: "^(data|stringData)$", MACOnlyEncrypted: true},
	} {
		t.Run(name, func(t *testing.T) {
			doc := encrypt(t, opts, a, b)
			if strings.Contains(string(doc), "c2VjcmV0LXZhbHVl") {
				t.Fatal("the encrypted document holds the plaintext")
			}
			got, err := secrets.Decrypt(doc, []age.Identity{b})
			if err != nil {
				t.Fatalf("Decrypt: %v", err)
			}
			var want map[string]any
			if err := yaml.Unmarshal([]byte(plainSecret), &want); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got.Object); d != "" {
				t.Errorf("Decrypt (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecryptWrongKeyNamesRecipients(t *testing.T) {
	a, other := sopstest.NewIdentity(), sopstest.NewIdentity()
	_, err := secrets.Decrypt(encrypt(t, sopstest.KubernetesOptions, a), []age.Identity{other})
	var nk *secrets.NoKeyError
	if !errors.As(err, &nk) || !errors.Is(err, secrets.ErrNoKey) {
		t.Fatalf("err = %v, want a NoKeyError", err)
	}
	for _, r := range []string{a.Recipient().String(), other.Recipient().String()} {
		if !strings.Contains(err.Error(), r) {
			t.Errorf("error %q does not name recipient %s", err, r)
		}
	}
	if _, err := secrets.Decrypt(encrypt(t, sopstest.KubernetesOptions, a), nil); !errors.Is(err, secrets.ErrNoKey) ||
		!strings.Contains(err.Error(), "no age key is configured") {
		t.Errorf("without identities: err = %v", err)
	}
}

func TestDecryptTamperedIsMACError(t *testing.T) {
	a := sopstest.NewIdentity()
	doc := string(encrypt(t, sopstest.KubernetesOptions, a))
	cases := map[string]string{
		// an unencrypted value the MAC covers
		"label changed": strings.Replace(doc, "app: db", "app: evil", 1),
		// a value removed
		"value removed": removeLine(doc, "user:"),
		// two ciphertexts swapped: each is bound to its path
		"values swapped": swapValues(t, doc, "password:", "user:"),
	}
	for name, tampered := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := secrets.Decrypt([]byte(tampered), []age.Identity{a})
			if !errors.Is(err, secrets.ErrMAC) {
				t.Fatalf("err = %v, want ErrMAC", err)
			}
			if strings.Contains(err.Error(), "c2VjcmV0") || strings.Contains(err.Error(), "YWRtaW4") {
				t.Errorf("error leaks a value: %v", err)
			}
		})
	}
}

func removeLine(doc, prefix string) string {
	var out []string
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func swapValues(t *testing.T, doc, k1, k2 string) string {
	t.Helper()
	lines := strings.Split(doc, "\n")
	i1, i2 := -1, -1
	for i, l := range lines {
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), k1):
			i1 = i
		case strings.HasPrefix(strings.TrimSpace(l), k2):
			i2 = i
		}
	}
	if i1 < 0 || i2 < 0 {
		t.Fatal("keys not found")
	}
	v1 := lines[i1][strings.Index(lines[i1], ":")+1:]
	v2 := lines[i2][strings.Index(lines[i2], ":")+1:]
	lines[i1] = lines[i1][:strings.Index(lines[i1], ":")+1] + v2
	lines[i2] = lines[i2][:strings.Index(lines[i2], ":")+1] + v1
	return strings.Join(lines, "\n")
}

func TestDecryptRefusesOtherKeyTypes(t *testing.T) {
	doc := `apiVersion: v1
kind: Secret
metadata: {name: x}
data: {a: "ENC[AES256_GCM,data:AA==,iv:AA==,tag:AAAAAAAAAAAAAAAAAAAAAA==,type:str]"}
sops:
  pgp:
  - created_at: "2026-01-01T00:00:00Z"
    enc: x
    fp: 0123
  lastmodified: "2026-01-01T00:00:00Z"
  mac: x
  version: 3.11.0
`
	_, err := secrets.Decrypt([]byte(doc), []age.Identity{sopstest.NewIdentity()})
	if !errors.Is(err, secrets.ErrUnsupported) || !strings.Contains(err.Error(), "pgp") {
		t.Errorf("err = %v, want ErrUnsupported naming pgp", err)
	}
}

// TestKeyringDecryptKeepsRenderedMetadata: labels and annotations changed
// after encryption (by render and overrides) stay on the decrypted object,
// and the MAC is checked against the document as committed.
func TestKeyringDecryptKeepsRenderedMetadata(t *testing.T) {
	a := sopstest.NewIdentity()
	doc := encrypt(t, sopstest.KubernetesOptions, a)
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
		t.Fatal(err)
	}
	obj.SetLabels(map[string]string{"app": "db", "region": "eu"})
	obj.SetAnnotations(map[string]string{workv1alpha1.AnnotationSOPSDocument: string(doc)})
	k, err := secrets.NewKeyring(map[string][]byte{"member.agekey": []byte(a.String() + "\n"), "README": []byte("x")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := k.Decrypt(obj)
	if err != nil {
		t.Fatalf("Decrypt: %v", err)
	}
	if _, ok := got.Object["sops"]; ok {
		t.Error("the sops section is still there")
	}
	if len(got.GetAnnotations()) != 0 {
		t.Errorf("annotations = %v, want none", got.GetAnnotations())
	}
	if got.GetLabels()["region"] != "eu" {
		t.Errorf("labels = %v, want the rendered ones", got.GetLabels())
	}
	if pw, _, _ := unstructured.NestedString(got.Object, "data", "password"); pw != "c2VjcmV0LXZhbHVl" {
		t.Errorf("password not decrypted")
	}
	if hosts, _, _ := unstructured.NestedStringSlice(got.Object, "stringData", "hosts"); len(hosts) != 2 || hosts[1] != "b.example" {
		t.Errorf("hosts = %v", hosts)
	}

	obj.SetKind("ConfigMap")
	if _, err := k.Decrypt(obj); !errors.Is(err, secrets.ErrUnsupported) {
		t.Errorf("ConfigMap: err = %v, want ErrUnsupported", err)
	}
	if _, err := secrets.NewKeyring(map[string][]byte{"bad.agekey": []byte("AGE-SECRET-KEY-NOPE")}, nil); err == nil ||
		strings.Contains(err.Error(), "NOPE") {
		t.Errorf("a bad key: err = %v, want an error that does not show the key", err)
	}
}

func TestChangedKeys(t *testing.T) {
	a := sopstest.NewIdentity()
	before := encrypt(t, sopstest.KubernetesOptions, a)
	after := strings.Replace(plainSecret, "c2VjcmV0LXZhbHVl", "bmV3LXZhbHVl", 1)
	var b, c map[string]any
	if err := yaml.Unmarshal(before, &b); err != nil {
		t.Fatal(err)
	}
	c = deepCopyMap(t, b)
	d, err := sopstest.Encrypt([]byte(after), sopstest.KubernetesOptions, a.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	var n map[string]any
	if err := yaml.Unmarshal(d, &n); err != nil {
		t.Fatal(err)
	}
	c["data"].(map[string]any)["password"] = n["data"].(map[string]any)["password"]
	c["sops"] = n["sops"]
	keys, mac := sealed.ChangedKeys(b, c)
	if d := cmp.Diff([]string{"password"}, keys); d != "" || !mac {
		t.Errorf("sealed.ChangedKeys = %v, %v; want [password], true (%s)", keys, mac, d)
	}
	if got := sealed.Recipients(c); len(got) != 1 || got[0] != a.Recipient().String() {
		t.Errorf("Recipients = %v", got)
	}
}

func deepCopyMap(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

// TestDecryptShamirKeyGroups: with the data key split over age key groups,
// a keyring holding enough of them decrypts, one holding fewer has no key.
func TestDecryptShamirKeyGroups(t *testing.T) {
	a, b, c := sopstest.NewIdentity(), sopstest.NewIdentity(), sopstest.NewIdentity()
	doc := encrypt(t, sopstest.Options{EncryptedRegex: "^(data|stringData)$", ShamirThreshold: 2}, a, b, c)
	if got, err := secrets.Decrypt(doc, []age.Identity{c, a}); err != nil {
		t.Errorf("two of three groups: %v", err)
	} else if pw, _, _ := unstructured.NestedString(got.Object, "data", "password"); pw != "c2VjcmV0LXZhbHVl" {
		t.Errorf("password = %q", pw)
	}
	if _, err := secrets.Decrypt(doc, []age.Identity{b}); !errors.Is(err, secrets.ErrNoKey) {
		t.Errorf("one of three groups: err = %v, want ErrNoKey", err)
	}
}

// TestDecryptRefusesCommentRegexes: propagit's reader skips comments, so
// a document whose values sops chose by encrypted_comment_regex is
// refused as unsupported, naming the setting, rather than misread.
func TestDecryptRefusesCommentRegexes(t *testing.T) {
	a := sopstest.NewIdentity()
	plain := strings.Replace(plainSecret, "  password:", "  # sops:enc\n  password:", 1)
	doc, err := sopstest.Encrypt([]byte(plain), sopstest.Options{EncryptedCommentRegex: "sops:enc"}, a.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(doc), "c2VjcmV0LXZhbHVl") || !strings.Contains(string(doc), "user: YWRtaW4=") {
		t.Fatalf("not encrypted as the comment says:\n%s", doc)
	}
	_, err = secrets.Decrypt(doc, []age.Identity{a})
	if !errors.Is(err, secrets.ErrUnsupported) || !strings.Contains(err.Error(), "encrypted_comment_regex") {
		t.Errorf("err = %v, want ErrUnsupported naming encrypted_comment_regex", err)
	}
}

// TestDecryptKeepsAPlainCommentInAnEncryptedPath: a comment added by hand
// under data, where sops would have encrypted it, is kept as sops keeps it
// (comments are outside the MAC), and a value after it still decrypts.
func TestDecryptKeepsAPlainCommentInAnEncryptedPath(t *testing.T) {
	a := sopstest.NewIdentity()
	doc := string(encrypt(t, sopstest.KubernetesOptions, a))
	i := strings.Index(doc, "\ndata:\n") + len("\ndata:\n")
	commented := doc[:i] + "    # rotated in May\n" + doc[i:]
	got, err := secrets.Decrypt([]byte(commented), []age.Identity{a})
	if err != nil {
		t.Fatalf("Decrypt: %v", err)
	}
	if pw, _, _ := unstructured.NestedString(got.Object, "data", "password"); pw != "c2VjcmV0LXZhbHVl" {
		t.Errorf("password = %q", pw)
	}
}
