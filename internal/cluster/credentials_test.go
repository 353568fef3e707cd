package cluster

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

const (
	m1Token  = "m1-secret-token"
	gitToken = "controller-git-token"
	m1Server = "https://m1.example:6443"
)

// credSecret is a Secret in namespace ns holding a token; labelledFor, when
// not empty, binds it to that cluster.
func credSecret(ns, name, labelledFor, token string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"token": []byte(token)}}
	if labelledFor != "" {
		s.Labels = map[string]string{workv1alpha1.LabelCredentialsFor: labelledFor}
	}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// hubSecrets is every Secret an attacker could aim at: m1's and m2's bound
// credentials, an unlabelled token in the credentials namespace and the
// controller's Git token in its own namespace.
func hubSecrets() []*corev1.Secret {
	return []*corev1.Secret{
		credSecret(DefaultNamespace, "m1-credentials", "m1", m1Token, map[string]string{"server": m1Server, "caBundle": "CA"}),
		credSecret(DefaultNamespace, "m2-credentials", "m2", "m2-secret-token", map[string]string{"server": "https://m2.example:6443"}),
		credSecret(DefaultNamespace, "loose", "", "loose-token", map[string]string{"server": m1Server}),
		credSecret("propagit-system", "propagit-git", "", gitToken, nil),
	}
}

func newCreds(t *testing.T, extra ...*corev1.Secret) *Credentials {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme)
	for _, s := range append(hubSecrets(), extra...) {
		b = b.WithObjects(s)
	}
	return &Credentials{Hub: b.Build(), QPS: 1, Burst: 1}
}

// testKubeconfig reaches m1Server with m1Token.
const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: m1
  cluster: {server: "` + m1Server + `"}
users:
- name: m1
  user: {token: "` + m1Token + `"}
contexts:
- name: m1
  context: {cluster: m1, user: m1}
current-context: m1
`

func m1Cluster(mod func(*clusterv1alpha1.ClusterSpec)) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
	if mod != nil {
		mod(&c.Spec)
	}
	return c
}

func ref(ns, name string) *clusterv1alpha1.LocalSecretReference {
	return &clusterv1alpha1.LocalSecretReference{Namespace: ns, Name: name}
}

// TestCredentialsRefuseRedirection is the attack first: a Cluster in Git
// that aims at a credential or endpoint not bound to it gets no config.
func TestCredentialsRefuseRedirection(t *testing.T) {
	dup := credSecret(DefaultNamespace, "m1-again", "m1", m1Token, map[string]string{"server": m1Server})
	cases := []struct {
		name    string
		spec    func(*clusterv1alpha1.ClusterSpec)
		extra   []*corev1.Secret
		ns      string
		want    error
		mention string
	}{
		{name: "secretRef to the controller's Git token in its own namespace",
			spec: func(s *clusterv1alpha1.ClusterSpec) { s.SecretRef = ref("propagit-system", "propagit-git") },
			want: ErrCredentialMismatch, mention: "read only from namespace karmada-cluster"},
		{name: "secretRef to another member's credential",
			spec: func(s *clusterv1alpha1.ClusterSpec) { s.SecretRef = ref(DefaultNamespace, "m2-credentials") },
			want: ErrCredentialMismatch, mention: "labelled propagit.io/credentials-for=m2"},
		{name: "secretRef to an unlabelled Secret in the credentials namespace",
			spec: func(s *clusterv1alpha1.ClusterSpec) { s.SecretRef = ref(DefaultNamespace, "loose") },
			want: ErrCredentialMismatch, mention: "has no propagit.io/credentials-for label"},
		{name: "secretRef without a namespace to an unlabelled Secret",
			spec: func(s *clusterv1alpha1.ClusterSpec) { s.SecretRef = ref("", "loose") },
			want: ErrCredentialMismatch, mention: "has no propagit.io/credentials-for label"},
		{name: "apiEndpoint redirected to another host",
			spec: func(s *clusterv1alpha1.ClusterSpec) { s.APIEndpoint = "https://attacker.example:443" },
			want: ErrCredentialMismatch, mention: "spec.apiEndpoint https://attacker.example:443 is not the server"},
		{name: "apiEndpoint redirected with the bound secretRef",
			spec: func(s *clusterv1alpha1.ClusterSpec) {
				s.SecretRef, s.APIEndpoint = ref(DefaultNamespace, "m1-credentials"), "http://127.0.0.1:8080"
			},
			want: ErrCredentialMismatch, mention: "spec.apiEndpoint"},
		{name: "insecureSkipTLSVerification the credential does not allow",
			spec: func(s *clusterv1alpha1.ClusterSpec) { s.InsecureSkipTLSVerification = true },
			want: ErrCredentialMismatch, mention: "insecureSkipTLSVerify"},
		{name: "proxyURL the credential does not have",
			spec: func(s *clusterv1alpha1.ClusterSpec) { s.ProxyURL = "http://user:pw@proxy.attacker:3128" },
			want: ErrCredentialMismatch, mention: "spec.proxyURL http://proxy.attacker:3128 is not the proxyURL"},
		{name: "proxyURL different from the credential's",
			spec:  func(s *clusterv1alpha1.ClusterSpec) { s.ProxyURL = "http://proxy.attacker:3128" },
			extra: []*corev1.Secret{credSecret("creds", "p", "m1", m1Token, map[string]string{"server": m1Server, "proxyURL": "http://proxy.example:3128"})},
			ns:    "creds", want: ErrCredentialMismatch, mention: "a proxy is taken only from the credential"},
		{name: "two Secrets labelled for the cluster",
			extra: []*corev1.Secret{dup}, want: ErrCredentialMismatch, mention: "2 Secrets"},
		{name: "kubeconfig credential redirected by apiEndpoint",
			extra: []*corev1.Secret{credSecret("kc", "k", "m1", "", map[string]string{"kubeconfig": testKubeconfig})},
			ns:    "kc", spec: func(s *clusterv1alpha1.ClusterSpec) { s.APIEndpoint = "https://attacker.example" },
			want: ErrCredentialMismatch, mention: "spec.apiEndpoint https://attacker.example is not the server of credential Secret/kc/k"},
		{name: "bound Secret without a server",
			extra: []*corev1.Secret{credSecret("half", "h", "m1", m1Token, nil)},
			ns:    "half", spec: func(s *clusterv1alpha1.ClusterSpec) { s.APIEndpoint = "https://attacker.example" },
			want: ErrNoCredentials, mention: "has neither a server nor a kubeconfig key"},
		{name: "secretRef to a missing Secret",
			spec: func(s *clusterv1alpha1.ClusterSpec) { s.SecretRef = ref(DefaultNamespace, "nope") },
			want: ErrNoCredentials, mention: "karmada-cluster/nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cr := newCreds(t, tc.extra...)
			cr.Namespace = tc.ns
			cfg, err := cr.Config(context.Background(), m1Cluster(tc.spec))
			if cfg != nil {
				t.Fatalf("want no credential, got a config for %s with a token of %d bytes", cfg.Host, len(cfg.BearerToken))
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "cluster m1") || !strings.Contains(msg, tc.mention) {
				t.Errorf("message %q should name cluster m1 and %q", msg, tc.mention)
			}
			for _, secret := range []string{m1Token, gitToken, "m2-secret-token", "loose-token", "pw@", ":pw"} {
				if strings.Contains(msg, secret) {
					t.Errorf("message leaks %q: %s", secret, msg)
				}
			}
		})
	}
}

func TestCredentialsNoneForUnlabelledCluster(t *testing.T) {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m3"}}
	cfg, err := newCreds(t).Config(context.Background(), c)
	if cfg != nil || !errors.Is(err, ErrNoCredentials) {
		t.Fatalf("want no credentials for m3, got %v, %v", cfg, err)
	}
}

// TestCredentialsBound: what the bound Secret grants is what the config
// holds.
func TestCredentialsBound(t *testing.T) {
	proxied := credSecret("creds", "p-credentials", "m1", m1Token, map[string]string{"server": m1Server,
		"proxyURL": "http://proxy.example:3128", "insecureSkipTLSVerify": "true"})
	cases := []struct {
		name     string
		creds    func(t *testing.T) *Credentials
		spec     func(*clusterv1alpha1.ClusterSpec)
		insecure bool
		proxy    string
	}{
		{name: "found by label", creds: func(t *testing.T) *Credentials { return newCreds(t) }},
		{name: "named by secretRef, endpoint restated with a trailing slash", creds: func(t *testing.T) *Credentials { return newCreds(t) },
			spec: func(s *clusterv1alpha1.ClusterSpec) {
				s.SecretRef, s.APIEndpoint = ref(DefaultNamespace, "m1-credentials"), m1Server+"/"
			}},
		{name: "kubeconfig credential, endpoint restated",
			creds: func(t *testing.T) *Credentials {
				cr := newCreds(t, credSecret("kc", "k", "m1", "", map[string]string{"kubeconfig": testKubeconfig, "caBundle": "CA"}))
				cr.Namespace = "kc"
				return cr
			},
			spec: func(s *clusterv1alpha1.ClusterSpec) { s.APIEndpoint = m1Server }},
		{name: "proxy and insecure granted by the Secret in a chosen namespace",
			creds: func(t *testing.T) *Credentials {
				cr := newCreds(t, proxied)
				cr.Namespace = "creds"
				return cr
			},
			spec: func(s *clusterv1alpha1.ClusterSpec) {
				s.InsecureSkipTLSVerification, s.ProxyURL = true, "http://proxy.example:3128"
			},
			insecure: true, proxy: "http://proxy.example:3128"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.creds(t).Config(context.Background(), m1Cluster(tc.spec))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != m1Server || cfg.BearerToken != m1Token || cfg.Insecure != tc.insecure {
				t.Errorf("got host %s, token ok %v, insecure %v", cfg.Host, cfg.BearerToken == m1Token, cfg.Insecure)
			}
			if !tc.insecure && string(cfg.CAData) != "CA" {
				t.Errorf("want the Secret's caBundle, got %q", cfg.CAData)
			}
			got := ""
			if cfg.Proxy != nil {
				u, err := cfg.Proxy(&http.Request{})
				if err != nil {
					t.Fatal(err)
				}
				got = u.String()
			}
			if got != tc.proxy {
				t.Errorf("proxy: want %q, got %q", tc.proxy, got)
			}
		})
	}
}
