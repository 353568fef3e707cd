// Package keys finds the age identities that decrypt one member's
// SOPS-encrypted objects: a Secret per member or one shared Secret (on the
// hub for push members, in the agent's namespace for a pull member), or
// files outside a cluster. Keys never come from the fleet repository.
package keys

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/secrets"
)

// MemberSecretPrefix names a push member's own key Secret,
// sops-age-<cluster>, in the hub's credentials namespace.
const MemberSecretPrefix = "sops-age-"

// maxKeyBytes bounds a key file or Secret value.
const maxKeyBytes = 64 << 10

// Finder knows how to find a member's age keys. The agent and the
// controller take one (a Source, or a fake in their tests).
type Finder interface {
	Keyring(ctx context.Context, cluster string) (*secrets.Keyring, error)
}

var _ Finder = (*Source)(nil)

// Source finds a member's keys. The first that exists wins: the file
// <Dir>/<cluster>.agekey, the Secret sops-age-<cluster> in
// MemberNamespace, the shared Secret Namespace/Name. With none, the
// keyring is empty and every encrypted object reports its missing key.
type Source struct {
	// Reader reads the Secrets; nil when only Dir is used.
	Reader client.Reader
	// MemberNamespace holds the per-member Secrets; "" looks for none.
	MemberNamespace string
	// Namespace and Name locate the shared Secret (--decryption-secret);
	// Name "" means none.
	Namespace, Name string
	// Dir holds <cluster>.agekey files (outside a cluster).
	Dir string
	// Kinds are the kinds besides Secret that may be decrypted.
	Kinds []string
}

// Keyring returns cluster's keyring. Errors name the Secret or file,
// never a key.
func (s *Source) Keyring(ctx context.Context, cluster string) (*secrets.Keyring, error) {
	data, err := s.find(ctx, cluster)
	if err != nil {
		return nil, err
	}
	return secrets.NewKeyring(data, s.Kinds)
}

func (s *Source) find(ctx context.Context, cluster string) (map[string][]byte, error) {
	if errs := validation.IsDNS1123Subdomain(cluster); len(errs) > 0 {
		return nil, fmt.Errorf("invalid cluster name %q for a key lookup", cluster)
	}
	if s.Dir != "" {
		path := filepath.Join(s.Dir, cluster+secrets.KeySuffix)
		b, err := readBounded(path)
		switch {
		case err == nil:
			return map[string][]byte{cluster + secrets.KeySuffix: b}, nil
		case !os.IsNotExist(err):
			return nil, fmt.Errorf("failed to read age key file %s: %w", path, err)
		}
	}
	if s.Reader == nil {
		return nil, nil
	}
	if s.MemberNamespace != "" {
		data, found, err := s.secret(ctx, s.MemberNamespace, MemberSecretPrefix+cluster)
		if err != nil || found {
			return data, err
		}
	}
	if s.Name != "" {
		data, _, err := s.secret(ctx, s.Namespace, s.Name)
		return data, err
	}
	return nil, nil
}

// secret reads a Secret's data; found is false when it does not exist.
func (s *Source) secret(ctx context.Context, ns, name string) (map[string][]byte, bool, error) {
	var sec corev1.Secret
	err := s.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &sec)
	switch {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("failed to read decryption Secret %s/%s: %w", ns, name, err)
	}
	for k, v := range sec.Data {
		if len(v) > maxKeyBytes {
			return nil, false, fmt.Errorf("decryption Secret %s/%s: key %q is over %d bytes", ns, name, k, maxKeyBytes)
		}
	}
	return sec.Data, true, nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyBytes+1))
	if err == nil && len(b) > maxKeyBytes {
		err = fmt.Errorf("over %d bytes", maxKeyBytes)
	}
	return b, err
}

// Failing is a Decrypter for a member whose keys could not be read: each
// encrypted object fails alone with the reason, the others are applied.
type Failing struct{ Err error }

// Decrypt returns the reason the keys are missing.
func (f Failing) Decrypt(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return nil, f.Err
}
