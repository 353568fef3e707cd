package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// ErrNoCredentials means neither a kubeconfig file nor a Secret was found.
var ErrNoCredentials = errors.New("no credentials")

// ErrCredentialMismatch means the Cluster in Git asks for a credential,
// endpoint, TLS or proxy setting that the member's bound credential Secret
// does not grant. The member is not contacted.
var ErrCredentialMismatch = errors.New("credential mismatch")

// DefaultNamespace is the hub namespace of member credential Secrets when
// Credentials.Namespace is empty: Karmada's karmada-cluster.
const DefaultNamespace = "karmada-cluster"

// Keys of a member credential Secret (the shape of Argo CD's cluster Secrets,
// with Karmada's token and caBundle keys).
const (
	// KeyServer is the member's API endpoint, unless KeyKubeconfig is used.
	KeyServer = "server"
	// KeyKubeconfig is a whole kubeconfig; its server is the endpoint.
	KeyKubeconfig = "kubeconfig"
	// KeyCABundle is the PEM CA bundle of the member's apiserver.
	KeyCABundle = "caBundle"
	// KeyToken is a bearer token.
	KeyToken = "token"
	// KeyCertData and KeyKeyData are a PEM client certificate and key.
	KeyCertData = "tls.crt"
	KeyKeyData  = "tls.key"
	// KeyInsecureSkipTLSVerify, when "true", lets the Cluster in Git ask
	// for insecureSkipTLSVerification.
	KeyInsecureSkipTLSVerify = "insecureSkipTLSVerify"
	// KeyProxyURL is the proxy the member is dialled through.
	KeyProxyURL = "proxyURL"
)

// Credentials knows how to build a rest.Config for a member.
//
// On a hub, a member's credential is the one Secret in Namespace labelled
// workv1alpha1.LabelCredentialsFor=<cluster name>. The Cluster in Git can
// only name it (spec.secretRef, optional) and restate what it holds
// (spec.apiEndpoint, spec.proxyURL); it cannot point a credential at another
// endpoint, namespace or member.
type Credentials struct {
	// KubeconfigDir holds <cluster>.kubeconfig files (outside a cluster,
	// for the CLI and tests); a file there is used as it is.
	KubeconfigDir string
	// Hub reads the credential Secrets; nil when running without a hub.
	Hub client.Reader
	// Writer stores renewed tokens in them (Renew); nil disables renewal.
	Writer client.Writer
	// Namespace holds the member credential Secrets on the hub, and nothing
	// else; DefaultNamespace when empty. Never the controller's own
	// namespace, where its Git token lives.
	Namespace string
	// QPS and Burst are the client rate limits per member; server-side apply
	// is throttled hard by client-go's defaults (5/10).
	QPS   float32
	Burst int
}

// Config returns the rest.Config of c. Errors wrap ErrNoCredentials or
// ErrCredentialMismatch and never hold secret values.
func (cr *Credentials) Config(ctx context.Context, c *clusterv1alpha1.Cluster) (*rest.Config, error) {
	cfg, err := cr.config(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	cfg.QPS, cfg.Burst = cr.QPS, cr.Burst
	cfg.UserAgent = "propagit"
	return cfg, nil
}

func (cr *Credentials) namespace() string {
	if cr.Namespace == "" {
		return DefaultNamespace
	}
	return cr.Namespace
}

func (cr *Credentials) config(ctx context.Context, c *clusterv1alpha1.Cluster) (*rest.Config, error) {
	if path := cr.kubeconfigFile(c.Name); path != "" {
		return clientcmd.BuildConfigFromFlags("", path)
	}
	if cr.Hub == nil {
		return nil, fmt.Errorf("%w: no %s.kubeconfig in --kubeconfig-dir and no hub to read credentials from", ErrNoCredentials, c.Name)
	}
	s, err := cr.secret(ctx, c)
	if err != nil {
		return nil, err
	}
	return fromSecret(c, s)
}

// kubeconfigFile returns the path of cluster's file in KubeconfigDir, or
// "" when there is none.
func (cr *Credentials) kubeconfigFile(cluster string) string {
	if cr.KubeconfigDir == "" {
		return ""
	}
	path := filepath.Join(cr.KubeconfigDir, cluster+".kubeconfig")
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

// secret finds the Secret bound to c: named by spec.secretRef, if any, in
// the credentials namespace, else the one labelled for c.
func (cr *Credentials) secret(ctx context.Context, c *clusterv1alpha1.Cluster) (*corev1.Secret, error) {
	ns := cr.namespace()
	if ref := c.Spec.SecretRef; ref != nil {
		if ref.Namespace != "" && ref.Namespace != ns {
			return nil, fmt.Errorf("%w: spec.secretRef names Secret %s/%s, but member credentials are read only from namespace %s",
				ErrCredentialMismatch, ref.Namespace, ref.Name, ns)
		}
		var s corev1.Secret
		if err := cr.Hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, &s); err != nil {
			return nil, fmt.Errorf("%w: failed to read Secret %s/%s: %w", ErrNoCredentials, ns, ref.Name, err)
		}
		switch owner, ok := s.Labels[workv1alpha1.LabelCredentialsFor]; {
		case !ok:
			return nil, fmt.Errorf("%w: Secret %s/%s named by spec.secretRef has no %s label", ErrCredentialMismatch,
				ns, ref.Name, workv1alpha1.LabelCredentialsFor)
		case owner != c.Name:
			return nil, fmt.Errorf("%w: Secret %s/%s named by spec.secretRef is labelled %s=%s, not this cluster", ErrCredentialMismatch,
				ns, ref.Name, workv1alpha1.LabelCredentialsFor, owner)
		}
		return &s, nil
	}
	var list corev1.SecretList
	if err := cr.Hub.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{workv1alpha1.LabelCredentialsFor: c.Name}); err != nil {
		return nil, fmt.Errorf("failed to list Secrets in %s labelled %s=%s: %w", ns, workv1alpha1.LabelCredentialsFor, c.Name, err)
	}
	switch len(list.Items) {
	case 0:
		return nil, fmt.Errorf("%w: no Secret in namespace %s labelled %s=%s", ErrNoCredentials, ns, workv1alpha1.LabelCredentialsFor, c.Name)
	case 1:
		return &list.Items[0], nil
	}
	return nil, fmt.Errorf("%w: %d Secrets in namespace %s are labelled %s=%s; name one with spec.secretRef", ErrCredentialMismatch,
		len(list.Items), ns, workv1alpha1.LabelCredentialsFor, c.Name)
}

// fromSecret builds the config from a bound Secret: a server key or a
// kubeconfig key, then checks what the Cluster in Git restates.
func fromSecret(c *clusterv1alpha1.Cluster, s *corev1.Secret) (*rest.Config, error) {
	cfg, err := secretConfig(s)
	if err != nil {
		return nil, err
	}
	id := workv1alpha1.ObjectKey{Kind: "Secret", Namespace: s.Namespace, Name: s.Name}.Display()
	if ep := c.Spec.APIEndpoint; ep != "" && !sameEndpoint(ep, cfg.Host) {
		return nil, fmt.Errorf("%w: spec.apiEndpoint %s is not the server of credential %s", ErrCredentialMismatch, redact(ep), id)
	}
	allowInsecure := string(s.Data[KeyInsecureSkipTLSVerify]) == "true"
	if c.Spec.InsecureSkipTLSVerification {
		if !allowInsecure {
			return nil, fmt.Errorf("%w: spec.insecureSkipTLSVerification is true but credential %s does not set %s: \"true\"",
				ErrCredentialMismatch, id, KeyInsecureSkipTLSVerify)
		}
		cfg.Insecure, cfg.CAData, cfg.CAFile = true, nil, ""
	}
	proxy, err := secretProxy(s, id)
	if err != nil {
		return nil, err
	}
	if p := c.Spec.ProxyURL; p != "" && p != string(s.Data[KeyProxyURL]) {
		return nil, fmt.Errorf("%w: spec.proxyURL %s is not the proxyURL of credential %s; a proxy is taken only from the credential",
			ErrCredentialMismatch, redact(p), id)
	}
	if proxy != nil {
		cfg.Proxy = http.ProxyURL(proxy)
	}
	return cfg, nil
}

// secretConfig reads the endpoint and the client credential of s. A
// kubeconfig key is taken as it is (its TLS and proxy settings are the
// credential's own); with a server key, TLS is always verified.
func secretConfig(s *corev1.Secret) (*rest.Config, error) {
	id := workv1alpha1.ObjectKey{Kind: "Secret", Namespace: s.Namespace, Name: s.Name}.Display()
	var cfg *rest.Config
	if kc, ok := s.Data[KeyKubeconfig]; ok {
		var err error
		if cfg, err = clientcmd.RESTConfigFromKubeConfig(kc); err != nil {
			return nil, fmt.Errorf("%w: %s has an unreadable kubeconfig key", ErrNoCredentials, id)
		}
	} else {
		server := string(s.Data[KeyServer])
		if server == "" {
			return nil, fmt.Errorf("%w: %s has neither a %s nor a %s key", ErrNoCredentials, id, KeyServer, KeyKubeconfig)
		}
		cfg = &rest.Config{Host: server, BearerToken: string(s.Data[KeyToken])}
		cfg.CertData, cfg.KeyData = s.Data[KeyCertData], s.Data[KeyKeyData]
		if cfg.BearerToken == "" && (len(cfg.CertData) == 0 || len(cfg.KeyData) == 0) {
			return nil, fmt.Errorf("%w: %s has neither a %s nor %s and %s keys", ErrNoCredentials, id, KeyToken, KeyCertData, KeyKeyData)
		}
	}
	if ca := s.Data[KeyCABundle]; len(ca) > 0 {
		cfg.CAData, cfg.CAFile = ca, ""
	}
	return cfg, nil
}

// secretProxy parses the Secret's proxyURL key; nil when absent.
func secretProxy(s *corev1.Secret, id string) (*url.URL, error) {
	raw := string(s.Data[KeyProxyURL])
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("%w: %s has a %s key that is not an absolute URL", ErrNoCredentials, id, KeyProxyURL)
	}
	return u, nil
}

// sameEndpoint compares two API endpoints, ignoring a trailing slash and the
// case of scheme and host.
func sameEndpoint(a, b string) bool {
	norm := func(s string) string {
		s = strings.TrimSuffix(s, "/")
		u, err := url.Parse(s)
		if err != nil {
			return s
		}
		u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
		return u.String()
	}
	return norm(a) == norm(b)
}

// redact strips userinfo, query and fragment from a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
