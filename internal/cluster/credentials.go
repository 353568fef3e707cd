package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
)

// ErrNoCredentials means neither a kubeconfig file nor a Secret was found.
var ErrNoCredentials = errors.New("no credentials")

// Credentials knows how to build a rest.Config for a member.
type Credentials struct {
	// KubeconfigDir holds <cluster>.kubeconfig files (outside a cluster).
	KubeconfigDir string
	// Hub reads Secrets named by spec.secretRef; nil when running without a hub.
	Hub client.Reader
	// Namespace is the controller's namespace, used when secretRef has none.
	Namespace string
	// QPS and Burst are the client rate limits per member; server-side apply
	// is throttled hard by client-go's defaults (5/10).
	QPS   float32
	Burst int
}

// Config returns the rest.Config of c.
func (cr *Credentials) Config(ctx context.Context, c *clusterv1alpha1.Cluster) (*rest.Config, error) {
	cfg, err := cr.config(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	cfg.QPS, cfg.Burst = cr.QPS, cr.Burst
	cfg.UserAgent = "propagit"
	return cfg, nil
}

func (cr *Credentials) config(ctx context.Context, c *clusterv1alpha1.Cluster) (*rest.Config, error) {
	if cr.KubeconfigDir != "" {
		path := filepath.Join(cr.KubeconfigDir, c.Name+".kubeconfig")
		if _, err := os.Stat(path); err == nil {
			return clientcmd.BuildConfigFromFlags("", path)
		}
	}
	if c.Spec.SecretRef == nil || cr.Hub == nil {
		return nil, fmt.Errorf("%w: no %s.kubeconfig in --kubeconfig-dir and no spec.secretRef readable on a hub", ErrNoCredentials, c.Name)
	}
	ns := c.Spec.SecretRef.Namespace
	if ns == "" {
		ns = cr.Namespace
	}
	var s corev1.Secret
	if err := cr.Hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Spec.SecretRef.Name}, &s); err != nil {
		return nil, fmt.Errorf("failed to read Secret %s/%s: %w", ns, c.Spec.SecretRef.Name, err)
	}
	return fromSecret(c, &s)
}

// fromSecret accepts Karmada's shape (token + caBundle with spec.apiEndpoint)
// or a kubeconfig key.
func fromSecret(c *clusterv1alpha1.Cluster, s *corev1.Secret) (*rest.Config, error) {
	if kc, ok := s.Data["kubeconfig"]; ok {
		return clientcmd.RESTConfigFromKubeConfig(kc)
	}
	token, ok := s.Data["token"]
	if !ok {
		return nil, fmt.Errorf("Secret %s/%s has neither a kubeconfig nor a token key", s.Namespace, s.Name)
	}
	if c.Spec.APIEndpoint == "" {
		return nil, fmt.Errorf("Secret %s/%s holds a token but the Cluster has no spec.apiEndpoint", s.Namespace, s.Name)
	}
	cfg := &rest.Config{Host: c.Spec.APIEndpoint, BearerToken: string(token)}
	cfg.TLSClientConfig.CAData = s.Data["caBundle"]
	cfg.TLSClientConfig.Insecure = c.Spec.InsecureSkipTLSVerification
	return cfg, nil
}
