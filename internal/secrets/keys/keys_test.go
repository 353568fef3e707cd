package keys_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/propagit/propagit/internal/secrets/keys"
	"github.com/propagit/propagit/internal/secrets/sopstest"
)

func keySecret(ns, name, identity string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data: map[string][]byte{"member.agekey": []byte(identity + "\n"), "notes": []byte("not a key")}}
}

// TestSourceOrder: a key file wins, then the member's own
// sops-age-<cluster> Secret, then the shared Secret; with none the
// keyring is empty. Names that could escape the folder are refused.
func TestSourceOrder(t *testing.T) {
	file, own, shared := sopstest.NewIdentity(), sopstest.NewIdentity(), sopstest.NewIdentity()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "m1.agekey"), []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithObjects(
		keySecret("karmada-cluster", "sops-age-m2", own.String()),
		keySecret("propagit-system", "sops-age", shared.String()),
	).Build()
	s := &keys.Source{Reader: c, MemberNamespace: "karmada-cluster", Namespace: "propagit-system", Name: "sops-age", Dir: dir}
	for cluster, want := range map[string]string{
		"m1": file.Recipient().String(), "m2": own.Recipient().String(), "m3": shared.Recipient().String(),
	} {
		k, err := s.Keyring(t.Context(), cluster)
		if err != nil {
			t.Fatalf("%s: %v", cluster, err)
		}
		if got := k.Recipients(); len(got) != 1 || got[0] != want {
			t.Errorf("%s: recipients %v, want %s", cluster, got, want)
		}
	}
	none := &keys.Source{Reader: c, Namespace: "propagit-system", Name: "absent"}
	if k, err := none.Keyring(t.Context(), "m1"); err != nil || len(k.Recipients()) != 0 {
		t.Errorf("no Secret: %v, %v; want an empty keyring", k, err)
	}
	if _, err := s.Keyring(t.Context(), "../etc"); err == nil || !strings.Contains(err.Error(), "invalid cluster name") {
		t.Errorf("a path as cluster name: err = %v", err)
	}
}
