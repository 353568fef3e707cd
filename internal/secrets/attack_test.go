package secrets_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"filippo.io/age"
	"github.com/getsops/sops/v3/config"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/secrets"
	"github.com/propagit/propagit/internal/secrets/sopstest"
)

// sopsDefaultDataKey asks sops' own default key service for doc's data
// key, as the sops binary would: the control that shows an attack's setup
// is one sops falls for.
func sopsDefaultDataKey(t *testing.T, doc []byte) error {
	t.Helper()
	tree, err := sopsyaml.NewStore(&config.YAMLStoreConfig{}).LoadEncryptedFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tree.Metadata.GetDataKey()
	return err
}

// TestDecryptNeverUsesKeysFromTheEnvironment: the right key in each place
// sops looks for one (SOPS_AGE_KEY, SOPS_AGE_KEY_FILE, SOPS_AGE_KEY_CMD,
// ~/.config/sops/age/keys.txt) opens the file for sops itself, and never
// for propagit, whose keyring lacks it.
func TestDecryptNeverUsesKeysFromTheEnvironment(t *testing.T) {
	right, other := sopstest.NewIdentity(), sopstest.NewIdentity()
	doc := encrypt(t, sopstest.KubernetesOptions, right)
	for _, source := range []string{"SOPS_AGE_KEY", "SOPS_AGE_KEY_FILE", "SOPS_AGE_KEY_CMD", "keys.txt"} {
		t.Run(source, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			for _, v := range []string{"SOPS_AGE_KEY", "SOPS_AGE_KEY_FILE", "SOPS_AGE_KEY_CMD", "SOPS_AGE_SSH_PRIVATE_KEY_FILE", "SOPS_AGE_SSH_PRIVATE_KEY_CMD"} {
				t.Setenv(v, "")
				os.Unsetenv(v)
			}
			keyFile := filepath.Join(home, "key.txt")
			writeFile(t, keyFile, right.String()+"\n")
			ran := filepath.Join(home, "cmd-ran")
			switch source {
			case "SOPS_AGE_KEY":
				t.Setenv(source, right.String())
			case "SOPS_AGE_KEY_FILE":
				t.Setenv(source, keyFile)
			case "SOPS_AGE_KEY_CMD":
				t.Setenv(source, fmt.Sprintf("sh -c 'touch %s; cat %s'", ran, keyFile))
			case "keys.txt":
				writeFile(t, filepath.Join(home, ".config", "sops", "age", "keys.txt"), right.String()+"\n")
			}
			if err := sopsDefaultDataKey(t, doc); err != nil {
				t.Fatalf("control: sops' default key service does not find the key in %s: %v", source, err)
			}
			os.Remove(ran)

			for name, ids := range map[string][]age.Identity{"no keys": nil, "another key": {other}} {
				_, err := secrets.Decrypt(doc, ids)
				var nk *secrets.NoKeyError
				if !errors.As(err, &nk) || len(nk.Recipients) != 1 || nk.Recipients[0] != right.Recipient().String() {
					t.Errorf("%s: err = %v, want a NoKeyError naming %s", name, err, right.Recipient())
				}
			}
			k, err := secrets.NewKeyring(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := k.Decrypt(loaded(t, doc)); !errors.Is(err, secrets.ErrNoKey) || !strings.Contains(err.Error(), right.Recipient().String()) {
				t.Errorf("empty keyring: err = %v, want ErrNoKey naming the recipient", err)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("SOPS_AGE_KEY_CMD was run")
			}
		})
	}
}

// TestDecryptContactsNoKeyService: PGP, AWS KMS and Vault keys are refused
// without running gpg or sending a request, alone (unsupported) or beside
// an age key propagit lacks (no key). The control shows sops' default key
// service does run gpg and call the endpoints.
func TestDecryptContactsNoKeyService(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	dir := t.TempDir()
	gnupg := filepath.Join(dir, "gnupg")
	if err := os.Mkdir(gnupg, 0o700); err != nil {
		t.Fatal(err)
	}
	ranGPG := filepath.Join(dir, "gpg-ran")
	gpg := filepath.Join(dir, "gpg")
	writeFile(t, gpg, "#!/bin/sh\ntouch "+ranGPG+"\nexit 1\n")
	if err := os.Chmod(gpg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", dir)
	t.Setenv("GNUPGHOME", gnupg)
	t.Setenv("SOPS_GPG_EXEC", gpg)
	t.Setenv("VAULT_TOKEN", "x")
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_MAX_ATTEMPTS", "1")

	const created = "2026-01-01T00:00:00Z"
	pgp := map[string]any{"fp": "0123456789ABCDEF0123456789ABCDEF01234567", "created_at": created, "enc": "-----BEGIN PGP MESSAGE-----\n\nwcBMA\n-----END PGP MESSAGE-----\n"}
	kms := map[string]any{"arn": "arn:aws:kms:us-east-1:000000000000:key/x", "created_at": created, "enc": "AQID", "aws_profile": ""}
	vault := map[string]any{"vault_address": srv.URL, "engine_path": "transit", "key_name": "k", "created_at": created, "enc": "vault:v1:AQID"}
	lacking := sopstest.NewIdentity()
	doc := encrypt(t, sopstest.KubernetesOptions, sopstest.NewIdentity())
	only := func(name string, key map[string]any) []byte {
		return editSops(t, doc, func(m map[string]any) {
			delete(m, "age")
			m[name] = []any{key}
		})
	}
	mixed := editSops(t, doc, func(m map[string]any) {
		m["pgp"], m["kms"], m["hc_vault"] = []any{pgp}, []any{kms}, []any{vault}
	})

	if err := sopsDefaultDataKey(t, mixed); err == nil {
		t.Fatal("control: sops opened the data key")
	}
	if _, err := os.Stat(ranGPG); err != nil || hits.Load() == 0 {
		t.Fatalf("control: sops' default key service ran gpg: %v, sent %d requests; the setup would not see an attempt", err == nil, hits.Load())
	}
	os.Remove(ranGPG)
	hits.Store(0)

	for name, tc := range map[string]struct {
		doc  []byte
		want error
	}{
		"pgp only":          {only("pgp", pgp), secrets.ErrUnsupported},
		"kms only":          {only("kms", kms), secrets.ErrUnsupported},
		"hc_vault only":     {only("hc_vault", vault), secrets.ErrUnsupported},
		"beside an age key": {mixed, secrets.ErrNoKey},
		"in a key group": {editSops(t, doc, func(m map[string]any) {
			m["key_groups"] = []any{map[string]any{"hc_vault": []any{vault}, "age": m["age"]}}
			delete(m, "age")
		}), secrets.ErrNoKey},
		"two groups, no age": {editSops(t, doc, func(m map[string]any) {
			delete(m, "age")
			m["key_groups"] = []any{map[string]any{"kms": []any{kms}}, map[string]any{"hc_vault": []any{vault}}}
		}), secrets.ErrUnsupported},
		"no keys in the file": {editSops(t, doc, func(m map[string]any) { delete(m, "age") }), secrets.ErrMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := secrets.Decrypt(tc.doc, []age.Identity{lacking})
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if tc.want == secrets.ErrUnsupported && !strings.Contains(err.Error(), strings.SplitN(name, " ", 2)[0]) && !strings.HasPrefix(name, "two") {
				t.Errorf("err = %v, does not name the key type", err)
			}
		})
	}
	if _, err := os.Stat(ranGPG); err == nil {
		t.Error("gpg was run")
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests sent to a key service", n)
	}
}

// TestDecryptTamperedValuesAndMAC: a changed ciphertext, MAC or timestamp
// is a MAC error; a changed value type (sops does not authenticate it)
// fails without a panic and without quoting the decrypted value.
func TestDecryptTamperedValuesAndMAC(t *testing.T) {
	a := sopstest.NewIdentity()
	doc := string(encrypt(t, sopstest.KubernetesOptions, a))
	otherMAC := sopsField(t, encrypt(t, sopstest.KubernetesOptions, a), "mac")
	ids := []age.Identity{a}

	flipped := editValue(t, doc, "password", func(v string) string {
		i := strings.Index(v, "data:") + len("data:")
		c := byte('A')
		if v[i] == 'A' {
			c = 'B'
		}
		return v[:i] + string(c) + v[i+1:]
	})
	for name, tc := range map[string]struct {
		doc  string
		want error
	}{
		"ciphertext changed":   {flipped, secrets.ErrMAC},
		"mac from another doc": {string(editSops(t, []byte(doc), func(m map[string]any) { m["mac"] = otherMAC })), secrets.ErrMAC},
		"mac emptied":          {string(editSops(t, []byte(doc), func(m map[string]any) { m["mac"] = "" })), secrets.ErrMAC},
		"lastmodified changed": {string(editSops(t, []byte(doc), func(m map[string]any) { m["lastmodified"] = "2020-01-01T00:00:00Z" })), secrets.ErrMAC},
		"type str to int":      {retype(t, doc, "int"), secrets.ErrMalformed},
		"type str to float":    {retype(t, doc, "float"), secrets.ErrMalformed},
		"type str to bool":     {retype(t, doc, "bool"), secrets.ErrMalformed},
		"type str to time":     {retype(t, doc, "time"), secrets.ErrMalformed},
		"type str to bytes":    {retype(t, doc, "bytes"), secrets.ErrMalformed},
		"type str to comment":  {retype(t, doc, "comment"), secrets.ErrMAC},
		"not an ENC value":     {editValue(t, doc, "password", func(string) string { return "plain" }), secrets.ErrMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := secrets.Decrypt([]byte(tc.doc), ids)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if strings.Contains(err.Error(), "c2VjcmV0LXZhbHVl") {
				t.Errorf("error quotes the decrypted value: %v", err)
			}
		})
	}
}

// TestDecryptBoundsItsInput: a huge, deeply nested, alias-expanding,
// multi-document or padded input is refused before the reader walks it
// (each value may cost an AES-GCM open before the MAC is known).
func TestDecryptBoundsItsInput(t *testing.T) {
	a := sopstest.NewIdentity()
	doc := string(encrypt(t, sopstest.KubernetesOptions, a))
	nested := strings.Repeat("{a: ", 150) + "x" + strings.Repeat("}", 150)
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'z'; i++ {
		bomb += fmt.Sprintf("%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	for name, tc := range map[string]struct {
		doc, want string
	}{
		"5 MiB":           {doc + "padding: " + strings.Repeat("x", 5<<20) + "\n", "more than"},
		"150 levels deep": {strings.Replace(doc, "type: Opaque", "type: Opaque\ndeep: "+nested, 1), "nested more than"},
		"alias bomb":      {strings.Replace(doc, "type: Opaque", "type: Opaque\nbomb:\n  "+strings.ReplaceAll(strings.TrimSpace(bomb), "\n", "\n  "), 1), "alias"},
		"two documents":   {doc + "---\n" + doc, "more than one"},
		"a long regex":    {string(editSops(t, []byte(doc), func(m map[string]any) { m["encrypted_regex"] = "^(" + strings.Repeat("data|", 300) + "data)$" })), "encrypted_regex is"},
		"a bad regex":     {string(editSops(t, []byte(doc), func(m map[string]any) { m["encrypted_regex"] = "^(data" })), "encrypted_regex: error parsing"},
		"20,000 values":   {strings.Replace(doc, "type: Opaque", "type: Opaque\nother: ["+strings.Repeat("1,", 20000)+"1]", 1), "more than 10000 values"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := secrets.Decrypt([]byte(tc.doc), []age.Identity{a})
			if !errors.Is(err, secrets.ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrMalformed saying %q", err, tc.want)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// loaded is doc as load hands it on: the object with the document in its
// annotation.
func loaded(t *testing.T, doc []byte) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
		t.Fatal(err)
	}
	obj.SetAnnotations(map[string]string{workv1alpha1.AnnotationSOPSDocument: string(doc)})
	return obj
}

// editSops rewrites doc's sops section with edit, keeping the rest.
func editSops(t *testing.T, doc []byte, edit func(map[string]any)) []byte {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		t.Fatal(err)
	}
	top := root.Content[0]
	for i := 0; i < len(top.Content); i += 2 {
		if top.Content[i].Value != "sops" {
			continue
		}
		var m map[string]any
		if err := top.Content[i+1].Decode(&m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		if err := top.Content[i+1].Encode(m); err != nil {
			t.Fatal(err)
		}
	}
	out, err := yaml.Marshal(&root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sopsField(t *testing.T, doc []byte, field string) any {
	t.Helper()
	var m struct {
		Sops map[string]any `yaml:"sops"`
	}
	if err := yaml.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	return m.Sops[field]
}

// editValue rewrites the value of the first key named key.
func editValue(t *testing.T, doc, key string, edit func(string) string) string {
	t.Helper()
	lines := strings.Split(doc, "\n")
	for i, l := range lines {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == key {
			lines[i] = k + ": " + edit(strings.TrimSpace(v))
			return strings.Join(lines, "\n")
		}
	}
	t.Fatalf("no %s in the document", key)
	return ""
}

// retype changes the recorded type of the password's ciphertext.
func retype(t *testing.T, doc, typ string) string {
	t.Helper()
	return editValue(t, doc, "password", func(v string) string {
		return strings.Replace(v, "type:str]", "type:"+typ+"]", 1)
	})
}
