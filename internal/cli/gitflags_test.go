package cli

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"

	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
)

// TestKnownHostsVerifiesTheServerKey checks that --known-hosts becomes the
// SSH host key check: the listed key of the listed host is accepted, another
// key for that host is refused.
func TestKnownHostsVerifiesTheServerKey(t *testing.T) {
	dir := t.TempDir()
	clientKey := filepath.Join(dir, "identity")
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(clientKey, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	hostKey, otherKey := newSSHPublicKey(t), newSSHPublicKey(t)
	knownHosts := filepath.Join(dir, "known_hosts")
	line := "git.example.com " + string(ssh.MarshalAuthorizedKey(hostKey))
	if err := os.WriteFile(knownHosts, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}

	g := &gitOptions{url: "ssh://git@git.example.com/fleet.git", sshKey: clientKey, knownHosts: knownHosts}
	auth, err := g.auth()
	if err != nil {
		t.Fatal(err)
	}
	keys, ok := auth.(*gitssh.PublicKeys)
	if !ok || keys.HostKeyCallback == nil {
		t.Fatalf("auth = %T without a host key callback", auth)
	}
	addr := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 22}
	if err := keys.HostKeyCallback("git.example.com:22", addr, hostKey); err != nil {
		t.Errorf("the known host key was refused: %v", err)
	}
	if err := keys.HostKeyCallback("git.example.com:22", addr, otherKey); err == nil {
		t.Error("an unknown host key was accepted")
	}

	g = &gitOptions{url: "ssh://git@git.example.com/fleet.git", knownHosts: knownHosts}
	if _, err := g.auth(); err == nil {
		t.Error("--known-hosts without --git-ssh-key: want an error")
	}
	g = &gitOptions{url: "ssh://git@git.example.com/fleet.git", sshKey: clientKey, knownHosts: filepath.Join(dir, "missing")}
	if _, err := g.auth(); err == nil {
		t.Error("a missing --known-hosts file: want an error")
	}
}

func newSSHPublicKey(t *testing.T) ssh.PublicKey {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
