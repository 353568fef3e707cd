package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
)

// Renewal is what Renew did with a member's token.
type Renewal struct {
	// Renewed is set when a new token was written to the credential.
	Renewed bool
	// Expires is when the token in the credential expires (zero when it
	// is not a ServiceAccount token that expires).
	Expires time.Time
}

// Renew replaces the ServiceAccount token of c's bound credential Secret
// with a new one from the member's TokenRequest API once two thirds of its
// lifetime have passed, so that join can hand out short-lived tokens. The
// new token is requested with the current one, for the same ServiceAccount
// (the token's own subject) and the same lifetime; `propagit join` grants a
// ServiceAccount a token for itself and nothing else. Credentials without
// an expiring ServiceAccount token (client certificates, kubeconfig keys,
// static tokens) are left alone, and so is a member reached through a file
// in KubeconfigDir (Config uses it before any Secret). It needs Writer.
func (cr *Credentials) Renew(ctx context.Context, c *clusterv1alpha1.Cluster, now time.Time) (Renewal, error) {
	if cr.Hub == nil || cr.Writer == nil || cr.kubeconfigFile(c.Name) != "" {
		return Renewal{}, nil
	}
	s, err := cr.secret(ctx, c)
	if err != nil {
		return Renewal{}, err
	}
	token := string(s.Data[KeyToken])
	if _, kc := s.Data[KeyKubeconfig]; kc || token == "" {
		return Renewal{}, nil
	}
	expires, due := RenewalDue(token, now)
	if !due {
		return Renewal{Expires: expires}, nil
	}
	cfg, err := fromSecret(c, s)
	if err != nil {
		return Renewal{}, err
	}
	newToken, r, err := RenewToken(ctx, cfg, token, now)
	if err != nil {
		return r, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	if !r.Renewed {
		return r, nil
	}
	renewed := s.DeepCopy()
	renewed.Data[KeyToken] = []byte(newToken)
	// The update carries the Secret's resourceVersion: a credential
	// replaced meanwhile (a new join) is not overwritten.
	if err := cr.Writer.Update(ctx, renewed); err != nil {
		return Renewal{Expires: expires}, fmt.Errorf("cluster %s: failed to store the renewed token in Secret %s/%s: %w", c.Name, s.Namespace, s.Name, err)
	}
	return r, nil
}

// RenewToken asks the apiserver cfg reaches for a new token of the
// ServiceAccount that token belongs to, authenticated with token itself,
// once two thirds of its lifetime have passed at now; before that it
// returns "" and the current expiry. A token that is not an expiring
// ServiceAccount token is never renewed. The new token has the same
// lifetime. The pull agent renews its hub token with it.
func RenewToken(ctx context.Context, cfg *rest.Config, token string, now time.Time) (string, Renewal, error) {
	expires, due := RenewalDue(token, now)
	if !due {
		return "", Renewal{Expires: expires}, nil
	}
	claims, _ := serviceAccountClaims(token)
	lifetime := expires.Sub(time.Unix(claims.Iat, 0))
	cfg = rest.AnonymousClientConfig(cfg)
	cfg.BearerToken = token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", Renewal{Expires: expires}, err
	}
	secs := int64(lifetime / time.Second)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}
	out, err := cs.CoreV1().ServiceAccounts(claims.namespace).CreateToken(ctx, claims.name, tr, metav1.CreateOptions{})
	if err != nil {
		return "", Renewal{Expires: expires}, fmt.Errorf("failed to renew the token of ServiceAccount %s/%s (expires %s): %w",
			claims.namespace, claims.name, expires.UTC().Format(time.RFC3339), err)
	}
	return out.Status.Token, Renewal{Renewed: true, Expires: out.Status.ExpirationTimestamp.Time}, nil
}

// RenewalDue reads when token expires and whether two thirds of its
// lifetime have passed at now; a token that is not an expiring
// ServiceAccount token is never due (zero expiry).
func RenewalDue(token string, now time.Time) (expires time.Time, due bool) {
	claims, ok := serviceAccountClaims(token)
	if !ok {
		return time.Time{}, false
	}
	expires = time.Unix(claims.Exp, 0)
	lifetime := expires.Sub(time.Unix(claims.Iat, 0))
	return expires, !now.Before(expires.Add(-lifetime / 3))
}

// saClaims are the claims of a ServiceAccount token Renew reads.
type saClaims struct {
	Exp int64  `json:"exp"`
	Iat int64  `json:"iat"`
	Sub string `json:"sub"`
	// namespace and name come from Sub.
	namespace, name string
}

// serviceAccountClaims reads, without verifying it (the member verifies
// the token it is shown), the expiry and subject of a ServiceAccount JWT.
// ok is false for anything else: another kind of token, no expiry, a
// subject that is not a valid ServiceAccount name.
func serviceAccountClaims(token string) (saClaims, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(parts[1]) > 16<<10 {
		return saClaims{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return saClaims{}, false
	}
	var c saClaims
	if json.Unmarshal(payload, &c) != nil || c.Exp <= c.Iat || c.Iat <= 0 {
		return saClaims{}, false
	}
	ns, name, ok := strings.Cut(strings.TrimPrefix(c.Sub, "system:serviceaccount:"), ":")
	if !ok || !strings.HasPrefix(c.Sub, "system:serviceaccount:") ||
		len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return saClaims{}, false
	}
	c.namespace, c.name = ns, name
	return c, true
}
