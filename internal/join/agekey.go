package join

import (
	"context"
	"fmt"
	"strings"

	"filippo.io/age"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/propagit/propagit/internal/secrets"
)

// AgeKeySecret is the Secret, in Namespace of the member, holding the age
// identity the member's SOPS-encrypted objects are decrypted with: a pull
// agent reads it (--decryption-secret sops-age); for push it is copied to
// the hub as sops-age-<cluster> in CredentialsNamespace.
const AgeKeySecret = "sops-age"

// ensureAgeKey returns the recipient of the member's age key, creating the
// key when the Secret does not exist. An existing key is kept, never
// replaced, and the Secret is not labelled as join's: unjoin leaves it, so
// no key that Secrets in Git are encrypted to is lost by surprise.
func ensureAgeKey(ctx context.Context, cs kubernetes.Interface, cluster string) (string, error) {
	secretsAPI := cs.CoreV1().Secrets(Namespace)
	keyName := cluster + secrets.KeySuffix
	s, err := secretsAPI.Get(ctx, AgeKeySecret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		id, genErr := age.GenerateX25519Identity()
		if genErr != nil {
			return "", fmt.Errorf("failed to generate an age key: %w", genErr)
		}
		s = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: AgeKeySecret, Namespace: Namespace},
			Data: map[string][]byte{keyName: []byte(id.String() + "\n")}}
		s, err = secretsAPI.Create(ctx, s, metav1.CreateOptions{FieldManager: FieldManager})
	}
	if err != nil {
		return "", fmt.Errorf("failed to read or create Secret %s/%s: %w", Namespace, AgeKeySecret, err)
	}
	k, err := secrets.NewKeyring(s.Data, nil)
	if err != nil {
		return "", fmt.Errorf("secret %s/%s: %w", Namespace, AgeKeySecret, err)
	}
	rs := k.Recipients()
	if len(rs) == 0 {
		return "", fmt.Errorf("secret %s/%s holds no *%s key", Namespace, AgeKeySecret, secrets.KeySuffix)
	}
	return strings.Join(rs, ","), nil
}
