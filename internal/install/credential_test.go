package install

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sshFiles writes an unencrypted ed25519 key and a known_hosts line for
// git.example.com, and returns their paths and the key's PEM.
func sshFiles(t *testing.T) (key, hosts string, keyPEM []byte) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	keyPEM = pem.EncodeToMemory(block)
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key, hosts = filepath.Join(dir, "identity"), filepath.Join(dir, "known_hosts")
	write(t, key, keyPEM)
	write(t, hosts, []byte(knownhosts.Line([]string{"git.example.com"}, signer.PublicKey())+"\n"))
	return key, hosts, keyPEM
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestInstallOverSSH: the key and known_hosts become Secret propagit-git,
// placed right after its Namespace so it exists before the pods; the
// Deployment mounts it, required, and points the controller at both files.
func TestInstallOverSSH(t *testing.T) {
	key, hosts, keyPEM := sshFiles(t)
	o := DefaultOptions()
	o.Repo, o.Namespace = "git@git.example.com:fleet.git", "fleet-ops"
	cred, err := ReadGitCredential(o.Repo, CredentialFiles{SSHKey: key, KnownHosts: hosts})
	if err != nil {
		t.Fatal(err)
	}
	o.RequireGitSecret = true
	objs, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	objs = WithSecret(objs, cred.Secret(o.Namespace))
	order := map[string]int{}
	for i, u := range objs {
		order[ref(u)] = i
	}
	ns, secret, depAt := order["Namespace/fleet-ops"], order["Secret/fleet-ops/propagit-git"], order["Deployment.apps/fleet-ops/propagit-controller"]
	if secret != ns+1 || depAt < secret {
		t.Fatalf("apply order: Namespace %d, Secret %d, Deployment %d; want the Secret right after its Namespace", ns, secret, depAt)
	}
	got, _, _ := unstructured.NestedString(objs[secret].Object, "data", "identity")
	if got != base64.StdEncoding.EncodeToString(keyPEM) {
		t.Error("the Secret does not hold the key")
	}
	args := controllerArgs(t, objs)
	for _, want := range []string{"--git-ssh-key=/etc/propagit/git/identity", "--known-hosts=/etc/propagit/git/known_hosts", "--repo=git@git.example.com:fleet.git"} {
		if !strings.Contains(strings.Join(args, " "), want) {
			t.Errorf("controller args %v lack %s", args, want)
		}
	}
	dep := deployment(t, objs)
	volumes, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "volumes")
	found := false
	for _, v := range volumes {
		m := v.(map[string]any)
		if m["name"] == gitVolume {
			sec := m["secret"].(map[string]any)
			found = sec["secretName"] == GitSecretName && sec["optional"] == false
		}
	}
	if !found {
		t.Errorf("no required volume of Secret propagit-git: %v", volumes)
	}
	var out bytes.Buffer
	if err := WriteYAML(&out, append(objs[:secret:secret], objs[secret+1:]...)); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out.Bytes(), keyPEM[40:80]) {
		t.Error("the printed manifests hold the key")
	}
}

// TestInstallTokenMakesPodsWait: with a token file, the token variable is
// required, so the pods wait for the Secret instead of starting without it.
func TestInstallTokenMakesPodsWait(t *testing.T) {
	o := DefaultOptions()
	o.Repo, o.RequireGitSecret = "https://git.example.com/fleet.git", true
	objs, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(deployment(t, objs).Object, "spec", "template", "spec", "containers")
	env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
	for _, e := range env {
		m := e.(map[string]any)
		if m["name"] == "PROPAGIT_GIT_TOKEN" {
			if opt, _, _ := unstructured.NestedBool(m, "valueFrom", "secretKeyRef", "optional"); opt {
				t.Error("the token stays optional")
			}
			return
		}
	}
	t.Error("no PROPAGIT_GIT_TOKEN")
}

// TestEveryObjectLabelled: uninstall goes by the label, so every object
// install applies carries it, with the installation's namespace.
func TestEveryObjectLabelled(t *testing.T) {
	o := DefaultOptions()
	o.Repo, o.Namespace, o.ServiceMonitor = "https://git.example.com/fleet.git", "fleet-ops", true
	objs, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		if u.GetLabels()[LabelInstall] != "fleet-ops" {
			t.Errorf("%s: labels %v", ref(u), u.GetLabels())
		}
	}
}

// TestHostileCredentialFiles: what install reads from disk is checked
// before anything is built, quickly, and no error quotes the file's
// content.
func TestHostileCredentialFiles(t *testing.T) {
	key, hosts, keyPEM := sshFiles(t)
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge")
	write(t, huge, bytes.Repeat([]byte("A"), 10<<20))
	pub := filepath.Join(dir, "id.pub")
	write(t, pub, []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOc2 user@host\n"))
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("secret phrase"))
	if err != nil {
		t.Fatal(err)
	}
	encrypted := filepath.Join(dir, "encrypted")
	write(t, encrypted, pem.EncodeToMemory(block))
	garbage := filepath.Join(dir, "garbage")
	write(t, garbage, append([]byte("git.example.com ssh-ed25519 !!!notbase64\n"), keyPEM...))
	twoLines := filepath.Join(dir, "token")
	write(t, twoLines, []byte("tok-one\ntok-two\n"))
	const ssh, https = "ssh://git@git.example.com/fleet.git", "https://git.example.com/fleet.git"
	for _, tc := range []struct {
		name, repo string
		files      CredentialFiles
		want       string
	}{
		{"a 10 MiB key", ssh, CredentialFiles{SSHKey: huge, KnownHosts: hosts}, "larger than 256 KiB"},
		{"a public key as the private one", ssh, CredentialFiles{SSHKey: pub, KnownHosts: hosts}, "not an SSH private key"},
		{"a key with a passphrase", ssh, CredentialFiles{SSHKey: encrypted, KnownHosts: hosts}, "passphrase"},
		{"known_hosts that does not parse", ssh, CredentialFiles{SSHKey: key, KnownHosts: garbage}, "entry 1"},
		{"the key as known_hosts", ssh, CredentialFiles{SSHKey: key, KnownHosts: key}, "--known-hosts"},
		{"no known_hosts", ssh, CredentialFiles{SSHKey: key}, "needs both"},
		{"a 10 MiB token", https, CredentialFiles{Token: huge}, "larger than 256 KiB"},
		{"two tokens", https, CredentialFiles{Token: twoLines}, "one line"},
		{"a missing file", https, CredentialFiles{Token: filepath.Join(dir, "nope")}, "no such file"},
	} {
		began := time.Now()
		_, err := ReadGitCredential(tc.repo, tc.files)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
			continue
		}
		if took := time.Since(began); took > 2*time.Second {
			t.Errorf("%s: refused after %s", tc.name, took)
		}
		if strings.Contains(err.Error(), string(keyPEM[40:80])) || strings.Contains(err.Error(), "tok-one") || strings.Contains(err.Error(), "AAAA") {
			t.Errorf("%s: the error quotes the file: %v", tc.name, err)
		}
	}
}

func deployment(t *testing.T, objs []*unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == "Deployment" {
			return u
		}
	}
	t.Fatal("no Deployment")
	return nil
}
