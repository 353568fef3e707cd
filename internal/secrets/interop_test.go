package secrets_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/load"

	"filippo.io/age"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/propagit/propagit/internal/secrets"
)

// The testdata/*.sops.* files were written by the sops 3.11.0 binary
// (`sops encrypt --age … --encrypted-regex '^(data|stringData)$'`, a
// config with mac_only_encrypted, --unencrypted-suffix, JSON output) from
// testdata/plain.yaml, to the throwaway identity in sops-test.agekey.
// They hold propagit's reader to what sops really writes: comments,
// int/float/bool types, lists, an empty string.
func TestDecryptFilesWrittenBySops(t *testing.T) {
	ids := readIdentities(t)
	want := readYAML(t, "testdata/plain.yaml")
	for _, f := range []string{"regex.sops.yaml", "maconly.sops.yaml", "all.sops.yaml", "regex.sops.json"} {
		t.Run(f, func(t *testing.T) {
			doc, err := os.ReadFile("testdata/" + f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := secrets.Decrypt(doc, ids)
			if err != nil {
				t.Fatalf("Decrypt: %v", err)
			}
			if d := cmp.Diff(want, got.Object); d != "" {
				t.Errorf("Decrypt (-want +got):\n%s", d)
			}
		})
	}
}

// TestMACCoversMetadataUnlessMACOnlyEncrypted: with sops' default MAC a
// changed label is tampering; with mac_only_encrypted it is not.
func TestMACCoversMetadataUnlessMACOnlyEncrypted(t *testing.T) {
	ids := readIdentities(t)
	for f, wantErr := range map[string]error{"regex.sops.yaml": secrets.ErrMAC, "maconly.sops.yaml": nil} {
		doc, err := os.ReadFile("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		_, err = secrets.Decrypt([]byte(strings.Replace(string(doc), "app: db", "app: other", 1)), ids)
		if !errors.Is(err, wantErr) && !(wantErr == nil && err == nil) {
			t.Errorf("%s with a changed label: err = %v, want %v", f, err, wantErr)
		}
	}
}

func readIdentities(t *testing.T) []age.Identity {
	t.Helper()
	b, err := os.ReadFile("testdata/sops-test.agekey")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := age.ParseIdentities(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLoadKeepsSopsFilesDecryptable: the document load keeps beside a
// template (re-encoded from its parsed YAML) still decrypts with its MAC,
// for each file sops wrote.
func TestLoadKeepsSopsFilesDecryptable(t *testing.T) {
	for _, f := range []string{"regex.sops.yaml", "maconly.sops.yaml", "regex.sops.json"} {
		t.Run(f, func(t *testing.T) {
			doc, err := os.ReadFile("testdata/" + f)
			if err != nil {
				t.Fatal(err)
			}
			fs := filesys.MakeFsInMemory()
			if err := fs.WriteFile("/repo/db.yaml", doc); err != nil {
				t.Fatal(err)
			}
			set, err := load.Load(fs, "/repo")
			if err != nil || len(set.Templates) != 1 {
				t.Fatalf("load: %v, %d templates", err, len(set.Templates))
			}
			k, err := secrets.NewKeyring(map[string][]byte{"test.agekey": mustRead(t, "testdata/sops-test.agekey")}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := k.Decrypt(set.Templates[0].Object)
			if err != nil {
				t.Fatalf("Decrypt after load: %v", err)
			}
			if pw, _, _ := unstructured.NestedString(got.Object, "data", "password"); pw != "c2VjcmV0LXZhbHVl" {
				t.Errorf("password = %q", pw)
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
