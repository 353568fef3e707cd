package join

import (
	"context"
	"fmt"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Check proves that cfg (the ServiceAccount's credentials) can do what
// propagit does: a server-side dry-run create of a Deployment in ns and a
// list of nodes. Forbidden answers are retried until timeout, since RBAC
// reaches the apiserver's authorizer a moment after it is written; the error
// then names the missing permission.
func Check(ctx context.Context, cfg *rest.Config, ns string, timeout time.Duration) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("failed to build the check client: %w", err)
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	var last error
	poll := func(ctx context.Context) (bool, error) {
		last = checkOnce(ctx, cs, ns)
		if last == nil {
			return true, nil
		}
		if !apierrors.IsForbidden(last) {
			return false, last
		}
		return false, nil
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, poll)
	if err != nil && last != nil {
		// last is both the terminal error and the last Forbidden answer.
		return fmt.Errorf("credential check failed for %s: %w", ServiceAccountUser, last)
	}
	return err
}

func checkOnce(ctx context.Context, cs kubernetes.Interface, ns string) error {
	d := checkDeployment(ns)
	_, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return fmt.Errorf("cannot create Deployments in namespace %s (server-side dry-run): %w", ns, err)
	}
	if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return fmt.Errorf("cannot list nodes: %w", err)
	}
	return nil
}

func checkDeployment(ns string) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": "propagit-join-check"}
	one := int32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "propagit-join-check-", Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "check", Image: "registry.k8s.io/pause:3.10",
				}}},
			},
		},
	}
}

// impersonated is cfg acting as the ServiceAccount (pull-mode check).
func impersonated(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: ServiceAccountUser}
	return c
}

// tokenConfig is a client config holding only the minted token and CA, as
// the hub will build it from the credential Secret.
func tokenConfig(res *Result) *rest.Config {
	c := &rest.Config{Host: res.APIEndpoint, BearerToken: res.Token}
	c.TLSClientConfig.CAData = res.CABundle
	return c
}

// caBundle reads the CA the kubeconfig trusts for the member.
func caBundle(cfg *rest.Config) ([]byte, error) {
	if len(cfg.TLSClientConfig.CAData) > 0 {
		return cfg.TLSClientConfig.CAData, nil
	}
	if cfg.TLSClientConfig.CAFile == "" {
		return nil, nil
	}
	b, err := os.ReadFile(cfg.TLSClientConfig.CAFile)
	if err != nil {
		return nil, fmt.Errorf("failed to read the member CA %s: %w", cfg.TLSClientConfig.CAFile, err)
	}
	return b, nil
}
