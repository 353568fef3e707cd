package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/secrets/keys"
	"github.com/propagit/propagit/internal/secrets/sealed"
)

// defaultKeyNamespace is where a bare --decryption-secret NAME is looked
// up when the process does not run in a cluster.
const defaultKeyNamespace = "propagit-system"

// saNamespaceFile names the namespace a pod runs in.
const saNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// keyOptions say where the age keys that decrypt SOPS-encrypted objects
// are: never in the fleet repository.
type keyOptions struct {
	secret string
	dir    string
	kinds  []string
}

// bindFlags binds --decryption-secret and --age-key-dir; withKinds also
// binds --decrypt-kinds (the controller has it among its load limits).
func (k *keyOptions) bindFlags(f *pflag.FlagSet, who string, withKinds bool) {
	f.StringVar(&k.secret, "decryption-secret", "", "Secret ([NAMESPACE/]NAME, default namespace: the one "+who+" runs in) whose *.agekey keys hold the age identities "+
		"that decrypt SOPS-encrypted objects just before they are applied")
	f.StringVar(&k.dir, "age-key-dir", "", "folder of <cluster>.agekey files, used before any Secret (outside a cluster)")
	if withKinds {
		f.StringSliceVar(&k.kinds, "decrypt-kinds", nil, "kinds besides Secret that may be SOPS-encrypted")
	}
}

// source returns where the keys are read, nil when no flag asks for
// decryption. reader reads the Secrets (nil without a cluster);
// memberNamespace holds per-member sops-age-<cluster> Secrets ("" none).
func (k *keyOptions) source(reader client.Reader, memberNamespace string, kinds []string) (*keys.Source, error) {
	if err := sealed.CheckKinds(append(slices.Clone(kinds), k.kinds...)); err != nil {
		return nil, err
	}
	if k.secret == "" && k.dir == "" {
		return nil, nil
	}
	s := &keys.Source{Dir: k.dir, Kinds: append(kinds, k.kinds...)}
	if k.secret == "" {
		return s, nil
	}
	if reader == nil {
		return nil, fmt.Errorf("--decryption-secret %s needs a cluster to read it from", k.secret)
	}
	n, err := parseNamespacedName("--decryption-secret", k.secret)
	if err != nil {
		return nil, err
	}
	s.Reader, s.Namespace, s.Name, s.MemberNamespace = reader, n.Namespace, n.Name, memberNamespace
	return s, nil
}

// parseNamespacedName reads flag's [NAMESPACE/]NAME, the namespace this
// pod runs in by default, and checks both are valid names.
func parseNamespacedName(flag, value string) (types.NamespacedName, error) {
	ns, name, found := strings.Cut(value, "/")
	if !found {
		ns, name = ownNamespace(), value
	}
	for _, v := range []string{ns, name} {
		if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
			return types.NamespacedName{}, fmt.Errorf("invalid %s %q: %s", flag, value, strings.Join(errs, "; "))
		}
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// ownNamespace is the namespace this pod runs in, defaultKeyNamespace
// outside a cluster.
func ownNamespace() string {
	if b, err := os.ReadFile(saNamespaceFile); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b))
	}
	return defaultKeyNamespace
}
