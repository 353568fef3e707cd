package secrets_test

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/propagit/propagit/internal/secrets"
	"github.com/propagit/propagit/internal/secrets/sealed"
	"github.com/propagit/propagit/internal/secrets/sopstest"
)

// richSecret has what sops must round-trip: comments (above keys, inline,
// in lists), nesting, lists of scalars and of mappings, int, float, bool,
// an empty string and a null, and keys the suffix rules select.
const richSecret = `# the database
apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: demo
  labels:
    app: db # inline
type: Opaque
data:
  # rotated in May
  password: c2VjcmV0LXZhbHVl
  user: YWRtaW4=
  empty: ""
stringData:
  port: 5432
  ratio: 1.5
  big: 9007199254740993
  tls: true
  none: null
  token_enc: abc
  note_unencrypted: readable
  hosts:
  # primary first
  - a.example
  - b.example
  nested:
    servers:
    - {name: one, weight: 2, up: false}
    - name: two
      weight: 0.25
`

// TestReaderDecryptsWhatTheSopsLibraryWrites: for every rule sops has
// (default suffix, each suffix and regex rule, mac_only_encrypted, Shamir
// groups), in YAML and JSON, the document the SOPS library encrypts
// decrypts to the plaintext, values of every type included.
func TestReaderDecryptsWhatTheSopsLibraryWrites(t *testing.T) {
	a, b, c := sopstest.NewIdentity(), sopstest.NewIdentity(), sopstest.NewIdentity()
	var want map[string]any
	if err := yaml.Unmarshal([]byte(richSecret), &want); err != nil {
		t.Fatal(err)
	}
	plainJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string]sopstest.Options{
		"default":            {},
		"encrypted_regex":    sopstest.KubernetesOptions,
		"unencrypted_regex":  {UnencryptedRegex: "^(apiVersion|kind|metadata|type)$"},
		"encrypted_suffix":   {EncryptedSuffix: "_enc"},
		"unencrypted_suffix": {UnencryptedSuffix: "_unencrypted"},
		"mac_only_encrypted": {EncryptedRegex: "^(data|stringData)$", MACOnlyEncrypted: true},
		"shamir 2 of 3":      {EncryptedRegex: "^(data|stringData)$", ShamirThreshold: 2},
	} {
		for _, format := range []string{"yaml", "json"} {
			t.Run(name+"/"+format, func(t *testing.T) {
				plain := []byte(richSecret)
				if opts.JSON = format == "json"; opts.JSON {
					plain = plainJSON
				}
				doc, err := sopstest.Encrypt(plain, opts, a.Recipient(), b.Recipient(), c.Recipient())
				if err != nil {
					t.Fatal(err)
				}
				if opts.EncryptedSuffix == "" && strings.Contains(string(doc), "c2VjcmV0LXZhbHVl") {
					t.Fatal("the password is in the clear")
				}
				got, err := secrets.Decrypt(doc, []age.Identity{c, a})
				if err != nil {
					t.Fatalf("Decrypt: %v\n%s", err, doc)
				}
				if d := cmp.Diff(want, got.Object); d != "" {
					t.Errorf("Decrypt (-want +got):\n%s", d)
				}
				moved := strings.Replace(string(doc), "app: db", "app: dc", 1)
				moved = strings.Replace(moved, `"app": "db"`, `"app": "dc"`, 1)
				if moved == string(doc) {
					return // the label is encrypted
				}
				if _, err := secrets.Decrypt([]byte(moved), []age.Identity{c, a}); opts.MACOnlyEncrypted == errors.Is(err, secrets.ErrMAC) {
					t.Errorf("a changed plain label: err = %v (mac_only_encrypted %v)", err, opts.MACOnlyEncrypted)
				}
			})
		}
	}
}

// TestReaderRefusesTamperedAndMovedValues: a value whose ciphertext is
// changed, or that is moved to another key or into another document with
// the same data key's MAC, fails authentication (ErrMAC), in YAML and
// JSON.
func TestReaderRefusesTamperedAndMovedValues(t *testing.T) {
	a := sopstest.NewIdentity()
	for _, js := range []bool{false, true} {
		plain := []byte(plainSecret)
		if js {
			var m map[string]any
			if err := yaml.Unmarshal(plain, &m); err != nil {
				t.Fatal(err)
			}
			plain, _ = json.Marshal(m)
		}
		doc, err := sopstest.Encrypt(plain, sopstest.Options{EncryptedRegex: "^(data|stringData)$", JSON: js}, a.Recipient())
		if err != nil {
			t.Fatal(err)
		}
		var tree map[string]any
		if err := yaml.Unmarshal(doc, &tree); err != nil {
			t.Fatal(err)
		}
		data := tree["data"].(map[string]any)
		pw, user := data["password"].(string), data["user"].(string)
		for name, tampered := range map[string]string{
			"password moved to user": strings.Replace(strings.Replace(string(doc), user, "X", 1), pw, user, 1),
			"user moved to password": strings.Replace(string(doc), pw, user, 1),
			"data flipped":           strings.Replace(string(doc), pw, flip(pw), 1),
		} {
			_, err := secrets.Decrypt([]byte(tampered), []age.Identity{a})
			if !errors.Is(err, secrets.ErrMAC) && !(strings.Contains(name, "to user") && errors.Is(err, secrets.ErrMalformed)) {
				t.Errorf("json %v, %s: err = %v, want ErrMAC", js, name, err)
			}
			if err != nil && strings.Contains(err.Error(), "c2VjcmV0") {
				t.Errorf("error quotes the value: %v", err)
			}
		}
	}
}

// flip changes one base64 character of an ENC value's data.
func flip(v string) string {
	i := strings.Index(v, "data:") + len("data:")
	c := byte('A')
	if v[i] == 'A' {
		c = 'B'
	}
	return v[:i] + string(c) + v[i+1:]
}

// TestKeyringSecretValuesAreStrings: a Secret's decrypted unquoted number,
// float and boolean reach the member as their text (base64 in data), never
// as a number the API server would refuse, quoting it in its error.
func TestKeyringSecretValuesAreStrings(t *testing.T) {
	a := sopstest.NewIdentity()
	plain := "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: demo}\n" +
		"data:\n  pin: 1234\nstringData:\n  port: 5432\n  ratio: 1.5\n  tls: true\n  name: x\n"
	doc, err := sopstest.Encrypt([]byte(plain), sopstest.KubernetesOptions, a.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	k, err := secrets.NewKeyring(map[string][]byte{"m.agekey": []byte(a.String())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := k.Decrypt(loaded(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"pin": "1234", "port": "NTQzMg==", "ratio": "MS41", "tls": "dHJ1ZQ==", "name": "eA=="}
	if d := cmp.Diff(want, got.Object["data"]); d != "" {
		t.Errorf("data (-want +got):\n%s", d)
	}
	if _, ok := got.Object["stringData"]; ok {
		t.Errorf("stringData left: %v", got.Object["stringData"])
	}
}

// TestDecryptKindsAcceptsOnlyDataKinds: --decrypt-kinds may add
// ConfigMap, never a kind that runs, grants or intercepts anything, since
// restrictions would judge only its ciphertext.
func TestDecryptKindsAcceptsOnlyDataKinds(t *testing.T) {
	if err := sealed.CheckKinds([]string{"ConfigMap"}); err != nil {
		t.Errorf("ConfigMap: %v", err)
	}
	for _, kind := range []string{"Pod", "Deployment", "CronJob", "PodTemplate", "ReplicationController", "Role", "ClusterRoleBinding",
		"ServiceAccount", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "APIService", "PersistentVolume",
		"Service", "Endpoints", "Namespace", "CustomResourceDefinition", "Widget"} {
		err := sealed.CheckKinds([]string{"ConfigMap", kind})
		if err == nil || !strings.Contains(err.Error(), kind) || !strings.Contains(err.Error(), "--decrypt-kinds") {
			t.Errorf("%s: err = %v, want an error naming it", kind, err)
		}
		if sealed.KindAllowed(kind, []string{kind}) {
			t.Errorf("KindAllowed(%s) with --decrypt-kinds %s", kind, kind)
		}
		if _, err := secrets.NewKeyring(nil, []string{kind}); err == nil {
			t.Errorf("NewKeyring with %s: no error", kind)
		}
	}
}

// TestPropagitLinksNoSops: no package of the SOPS library (its audit
// package reads /etc/sops/audit.yaml at start-up, its key services reach
// KMS and Vault) is linked into the propagit binary.
func TestPropagitLinksNoSops(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/propagit/propagit/cmd/propagit").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "filippo.io/age\n") {
		t.Fatalf("go list printed no age package; is this the right module?\n%.500s", out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/getsops/") || strings.HasSuffix(p, "/sopstest") {
			t.Errorf("propagit links %s", p)
		}
	}
}

// FuzzDecrypt: no input panics the reader or makes it quote a decrypted
// value in an error.
func FuzzDecrypt(f *testing.F) {
	id := sopstest.NewIdentity()
	for _, opts := range []sopstest.Options{sopstest.KubernetesOptions, {JSON: true}, {EncryptedRegex: "^data$", ShamirThreshold: 2}} {
		plain := []byte(plainSecret)
		if opts.JSON {
			plain = []byte(`{"kind":"Secret","data":{"password":"c2VjcmV0LXZhbHVl","n":[1,2.5,true]}}`)
		}
		doc, err := sopstest.Encrypt(plain, opts, id.Recipient(), sopstest.NewIdentity().Recipient())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		_, err := secrets.Decrypt(doc, []age.Identity{id})
		if err != nil && strings.Contains(err.Error(), "c2VjcmV0LXZhbHVl") && !strings.Contains(string(doc), "c2VjcmV0LXZhbHVl") {
			t.Errorf("error quotes the decrypted value: %v", err)
		}
	})
}
