package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/testenv"
)

// TestOpsInstallDeploymentAvailable builds the propagit binary, prints
// `propagit install --dry-run -o yaml` for a set of flags, applies that
// output with server-side apply to a real kube-apiserver (with
// controller-manager, scheduler and a kwok fake node), and waits for the
// controller Deployment to become Available. It then checks that the RBAC
// objects exist where the manifests say and that the Deployment's args
// carry the flags, and runs `propagit install` itself against the same
// apiserver to show its own apply path takes over the fields cleanly.
//
// What this proves and what it does not: the manifests are accepted by a
// real apiserver, the Deployment's ReplicaSet and Pods are created and
// scheduled, and the Deployment reaches Available. kwok marks the fake
// node's Pods Running and Ready without pulling or running the image, so
// the controller process itself never starts here: image pull, Secret
// mounts (the required webhook Secret is never created) and the probes are
// not exercised.
func TestOpsInstallDeploymentAvailable(t *testing.T) {
	t.Parallel()
	bin := buildPropagit(t)
	ns := e2etest.RandomName("propagit-ops")
	flags := []string{"--repo", "https://git.example.com/fleet.git", "--branch", "release", "--path", "clusters/prod",
		"--works-store", "git", "--webhook-secret", "fleet-hook", "--replicas", "1",
		"--image", "registry.example.com/propagit:v0.0.1-e2e", "--controller-namespace", ns}

	out, err := exec.Command(bin, append([]string{"install", "--dry-run", "-o", "yaml"}, flags...)...).Output()
	if err != nil {
		t.Fatalf("propagit install --dry-run: %v\n%s", err, stderrOf(err))
	}
	objs := decodeYAMLStream(t, out)

	env := testenv.Start(t, testenv.Options{Members: 1, Workloads: true})
	hub := env.Members[0]
	c, err := client.New(hub.Config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("propagit-e2e"), client.ForceOwnership)
		cancel()
		if err != nil {
			t.Fatalf("server-side apply of %s/%s %s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}

	deploy := &appsv1.Deployment{}
	took := e2etest.Eventually(t, 2*time.Minute, 250*time.Millisecond, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "propagit-controller"}, deploy); err != nil {
			return false, err.Error()
		}
		for _, cond := range deploy.Status.Conditions {
			if cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionTrue && deploy.Status.AvailableReplicas == 1 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("status %+v", deploy.Status)
	})
	t.Logf("Deployment %s/propagit-controller Available %s after the apply", ns, took.Round(time.Millisecond))

	checkControllerSpec(t, deploy)
	checkInstalledRBAC(t, c, ns)

	// propagit install's own apply: same flags, against the same cluster.
	cmd := exec.Command(bin, append([]string{"install", "--kubeconfig", hub.KubeconfigPath}, flags...)...)
	applied, err := cmd.Output()
	if err != nil {
		t.Fatalf("propagit install: %v\n%s", err, stderrOf(err))
	}
	if n := strings.Count(string(applied), "serverside-applied"); n != len(objs) {
		t.Errorf("propagit install applied %d objects, want %d:\n%s", n, len(objs), applied)
	}
}

func checkControllerSpec(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	if got := *d.Spec.Replicas; got != 1 {
		t.Errorf("replicas = %d, want 1", got)
	}
	ctr := d.Spec.Template.Spec.Containers[0]
	if ctr.Image != "registry.example.com/propagit:v0.0.1-e2e" {
		t.Errorf("image = %s", ctr.Image)
	}
	for _, want := range []string{"--repo=https://git.example.com/fleet.git", "--branch=release", "--path=clusters/prod",
		"--works-store=git", "--controller-namespace=" + d.Namespace, "--leader-elect",
		"--webhook-github-secret-file=/etc/propagit/webhook/github-secret"} {
		if !slices.Contains(ctr.Args, want) {
			t.Errorf("controller args lack %s: %v", want, ctr.Args)
		}
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "webhook" && (v.Secret == nil || v.Secret.SecretName != "fleet-hook") {
			t.Errorf("webhook volume does not mount Secret fleet-hook: %+v", v.VolumeSource)
		}
	}
}

// checkInstalledRBAC reads back the ServiceAccount, its Role and binding in
// the install namespace, the credentials Role in karmada-cluster, and the
// NetworkPolicy.
func checkInstalledRBAC(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, o := range []struct {
		obj       client.Object
		namespace string
	}{
		{&corev1.ServiceAccount{}, ns},
		{&rbacv1.Role{}, ns},
		{&rbacv1.RoleBinding{}, ns},
		{&networkingv1.NetworkPolicy{}, ns},
	} {
		if err := c.Get(ctx, client.ObjectKey{Namespace: o.namespace, Name: "propagit-controller"}, o.obj); err != nil {
			t.Errorf("%T %s/propagit-controller: %v", o.obj, o.namespace, err)
		}
	}
	role := &rbacv1.Role{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-cluster", Name: "propagit-member-credentials"}, role); err != nil {
		t.Fatalf("credentials Role: %v", err)
	}
	if len(role.Rules) != 1 || !slices.Contains(role.Rules[0].Resources, "secrets") || slices.Contains(role.Rules[0].Verbs, "create") {
		t.Errorf("credentials Role must only read Secrets: %+v", role.Rules)
	}
	binding := &rbacv1.RoleBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-cluster", Name: "propagit-member-credentials"}, binding); err != nil {
		t.Fatalf("credentials RoleBinding: %v", err)
	}
	want := rbacv1.Subject{Kind: "ServiceAccount", Name: "propagit-controller", Namespace: ns}
	if len(binding.Subjects) != 1 || binding.Subjects[0] != want {
		t.Errorf("credentials RoleBinding subjects = %+v, want %+v", binding.Subjects, want)
	}
}

// buildPropagit builds cmd/propagit into the test's temporary folder.
func buildPropagit(t *testing.T) string {
	t.Helper()
	bin, err := e2etest.BuildPropagit(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func decodeYAMLStream(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("install output is not a YAML stream: %v", err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	if len(objs) < 8 {
		t.Fatalf("install printed only %d objects:\n%s", len(objs), data)
	}
	return objs
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}
