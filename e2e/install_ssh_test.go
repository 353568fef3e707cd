package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"golang.org/x/crypto/ssh"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/testenv"
)

// TestOpsInstallOverSSHThenUninstall installs the controller for a fleet
// served over SSH by a real Git server (the real git-upload-pack and
// git-receive-pack), with `propagit install --git-ssh-key --known-hosts`
// against a real apiserver (with controller-manager, so Namespaces
// finalize). The key lands in Secret propagit-git, which the Deployment
// mounts, required. The Deployment is then run as its pod would run it:
// the same binary with the Deployment's own args, the Secret's files where
// it mounts them, and --hub-kubeconfig in place of the in-cluster config
// (kwok never runs the image). It fetches over SSH, records Works on the
// work branch over SSH and applies the fleet. Then `propagit uninstall
// --delete-namespaces --delete-crds` leaves no object labelled
// propagit.io/install on the cluster, and the default uninstall keeps the
// Namespaces and the CRD.
func TestOpsInstallOverSSHThenUninstall(t *testing.T) {
	t.Parallel()
	bin := buildPropagit(t)
	env := testenv.Start(t, testenv.Options{Members: 1, Workloads: true})
	hub := env.Members[0]
	c, err := client.New(hub.Config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}

	// The Git host: a bare repository served over SSH to one client key.
	root := t.TempDir()
	if _, err := git.PlainInit(filepath.Join(root, "fleet.git"), true); err != nil {
		t.Fatal(err)
	}
	keyFile, pub := writeSSHKey(t)
	srv := e2etest.StartSSHGitServer(t, root, pub)
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(knownHosts, []byte(srv.KnownHosts+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ns := e2etest.RandomName("propagit-ssh")
	propagitOK(t, bin, "install", "--kubeconfig", hub.KubeconfigPath, "--repo", srv.URL("fleet.git"), "--path", fleetDir,
		"--git-ssh-key", keyFile, "--known-hosts", knownHosts, "--controller-namespace", ns, "--replicas", "1",
		"--image", "registry.example.com/propagit:v0.0.1-e2e")

	// The member is the hub itself, joined as the README says.
	local := &e2etest.Remote{URL: "file://" + filepath.Join(root, "fleet.git"), Dir: filepath.Join(root, "fleet.git")}
	co := newCheckout(t, local)
	co.Write(fleetDir+"/clusters/"+hub.Name+".yaml", string(joinPush(t, c, hub)))
	app := e2etest.RandomName("ssh-app")
	co.Write(fleetDir+"/namespace.yaml", e2etest.NamespaceYAML(app))
	co.Write(fleetDir+"/policy.yaml", configMapsPolicyYAML(app, hub.Name))
	co.Write(fleetDir+"/settings.yaml", e2etest.ConfigMapYAML(app, "settings", "over-ssh"))
	rev := co.CommitPush("a fleet served over SSH")

	stop := runAsPod(t, bin, c, hub, ns)
	newStatusReader(t, local).waitApplied(rev, hub.Name)
	waitValue(t, hub, app, "settings", "over-ssh")
	stop()

	out := propagitOK(t, bin, "uninstall", "--kubeconfig", hub.KubeconfigPath, "--controller-namespace", ns)
	for _, kept := range []string{"Namespace/" + ns + " kept", "Namespace/karmada-cluster kept", "CustomResourceDefinition.apiextensions.k8s.io/works.propagit.io kept"} {
		if !strings.Contains(out, kept) {
			t.Errorf("uninstall without flags: no %q in\n%s", kept, out)
		}
	}
	propagitOK(t, bin, "uninstall", "--kubeconfig", hub.KubeconfigPath, "--controller-namespace", ns, "--delete-namespaces", "--delete-crds")
	eventually(t, converge, func() (bool, string) {
		left := labelled(t, hub, "propagit.io/install="+ns)
		return len(left) == 0, fmt.Sprintf("still labelled: %v", left)
	})
	if cm, err := getConfigMap(hub, app, "settings"); err != nil || cm == nil {
		t.Errorf("uninstall touched what the controller applied: ConfigMap %s/settings %v (err %v)", app, cm, err)
	}
}

// writeSSHKey writes an unencrypted ed25519 private key and returns its
// path and public key.
func writeSSHKey(t *testing.T) (string, ssh.PublicKey) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "identity")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return path, signer.PublicKey()
}

// propagitOK runs the binary, fails the test on a non-zero exit, and returns its
// standard output.
func propagitOK(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("propagit %s: %v\n%s", args[0], err, stderrOf(err))
	}
	return string(out)
}

// runAsPod runs the controller Deployment install applied in ns as its pod
// would: its args, with the Secret volume's files written where they are
// mounted and the pod's writable paths and ports moved to the test's; the
// in-cluster config becomes --hub-kubeconfig. It returns a stop function.
func runAsPod(t *testing.T, bin string, c client.Client, hub *testenv.Member, ns string) func() {
	t.Helper()
	ctx, cancel := kubeCtx()
	defer cancel()
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "propagit-controller"}, dep); err != nil {
		t.Fatal(err)
	}
	mounts := map[string]string{} // mount path → folder holding the Secret's files
	pod := dep.Spec.Template.Spec
	for _, m := range pod.Containers[0].VolumeMounts {
		i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 || pod.Volumes[i].Secret == nil {
			continue
		}
		s := &corev1.Secret{}
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod.Volumes[i].Secret.SecretName}, s)
		if err != nil && pod.Volumes[i].Secret.Optional != nil && *pod.Volumes[i].Secret.Optional {
			continue
		}
		if err != nil {
			t.Fatalf("the pod mounts Secret %s, required: %v", pod.Volumes[i].Secret.SecretName, err)
		}
		dir := t.TempDir()
		for key, data := range s.Data {
			if err := os.WriteFile(filepath.Join(dir, key), data, 0o400); err != nil {
				t.Fatal(err)
			}
		}
		mounts[m.MountPath] = dir
	}
	if _, ok := mounts["/etc/propagit/git"]; !ok {
		t.Fatalf("the Deployment mounts no Secret at /etc/propagit/git: %+v", pod.Containers[0].VolumeMounts)
	}
	args := []string{"--hub-kubeconfig", hub.KubeconfigPath}
	for _, a := range pod.Containers[0].Args {
		flag, value, _ := strings.Cut(a, "=")
		switch {
		case flag == "--cache-dir":
			a = flag + "=" + t.TempDir()
		case flag == "--health-addr" || flag == "--http-addr":
			a = flag + "=" + e2etest.FreeAddr(t)
		case strings.HasPrefix(value, "/etc/"):
			for path, dir := range mounts {
				if rest, ok := strings.CutPrefix(value, path+"/"); ok {
					a = flag + "=" + filepath.Join(dir, rest)
				}
			}
		}
		args = append(args, a)
	}
	runCtx, stop := context.WithCancel(context.Background())
	cmd := exec.CommandContext(runCtx, bin, args...)
	cmd.Env = append(os.Environ(), "POD_NAME=propagit-controller-0")
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	halt := func() {
		if stopped {
			return
		}
		stopped = true
		stop()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("controller output:\n%s", logs.String())
		}
	}
	t.Cleanup(halt)
	return halt
}

// labelled lists every object on m that carries the label selector sel,
// over every resource discovery lists.
func labelled(t *testing.T, m *testenv.Member, sel string) []string {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(m.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(m.Config)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		t.Fatal(err)
	}
	var out []string
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if !slices.Contains(r.Verbs, "list") {
				continue
			}
			ctx, cancel := kubeCtx()
			items, err := dyn.Resource(gv.WithResource(r.Name)).List(ctx, metav1.ListOptions{LabelSelector: sel})
			cancel()
			if err != nil {
				continue
			}
			for _, u := range items.Items {
				out = append(out, describeObject(&u))
			}
		}
	}
	return out
}

func describeObject(u *unstructured.Unstructured) string {
	return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
}
