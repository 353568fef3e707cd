package install

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// GitSecretName is the Secret the controller reads its Git credential
// from: key token for HTTPS, keys identity and known_hosts for SSH.
const GitSecretName = "propagit-git"

// Where the Deployment mounts Secret propagit-git for an SSH repository.
const (
	gitVolume     = "git"
	gitDir        = "/etc/propagit/git"
	keyIdentity   = "identity"
	keyKnownHosts = "known_hosts"
	keyToken      = "token"
)

// maxCredentialFile bounds each file install reads: a private key,
// known_hosts or a token is a few KiB at most.
const maxCredentialFile = 256 << 10

// IsSSH reports whether repo is reached over SSH: ssh://… or the scp-like
// user@host:path.
func IsSSH(repo string) bool {
	return strings.HasPrefix(repo, "ssh://") || (!strings.Contains(repo, "://") && strings.Contains(repo, "@") && strings.Contains(repo, ":"))
}

// GitCredential is the controller's Git credential, read by install from
// local files. It becomes Secret propagit-git, applied before the
// Deployment so the pods never start without it; it is never printed and
// no error quotes it.
type GitCredential struct {
	Token              []byte
	SSHKey, KnownHosts []byte
}

// CredentialFiles name the local files of a credential.
type CredentialFiles struct {
	Token, SSHKey, KnownHosts string
}

// Empty reports whether no file is named.
func (f CredentialFiles) Empty() bool { return f.Token == "" && f.SSHKey == "" && f.KnownHosts == "" }

// ReadGitCredential reads and checks the files for repo: a token for
// HTTPS; for SSH an unencrypted private key and a known_hosts file (the
// controller trusts no host key it was not given). nil when no file is
// named.
func ReadGitCredential(repo string, f CredentialFiles) (*GitCredential, error) {
	if f.Empty() {
		return nil, nil
	}
	if !IsSSH(repo) {
		if f.SSHKey != "" || f.KnownHosts != "" {
			return nil, errors.New("--git-ssh-key and --known-hosts are for an ssh:// or user@host:path repository; over HTTPS use --git-token-file")
		}
		token, err := readBounded("--git-token-file", f.Token)
		if err != nil {
			return nil, err
		}
		token = bytes.TrimSpace(token)
		if len(token) == 0 || bytes.ContainsAny(token, "\r\n") {
			return nil, fmt.Errorf("--git-token-file %s: want one line holding the token", f.Token)
		}
		return &GitCredential{Token: token}, nil
	}
	if f.Token != "" {
		return nil, errors.New("--git-token-file is for an HTTPS repository; over SSH use --git-ssh-key and --known-hosts")
	}
	if f.SSHKey == "" || f.KnownHosts == "" {
		return nil, errors.New("an SSH repository needs both --git-ssh-key and --known-hosts (the host keys the controller may trust)")
	}
	key, err := readBounded("--git-ssh-key", f.SSHKey)
	if err != nil {
		return nil, err
	}
	if _, err := ssh.ParsePrivateKey(key); err != nil {
		var pass *ssh.PassphraseMissingError
		if errors.As(err, &pass) {
			return nil, fmt.Errorf("--git-ssh-key %s is encrypted with a passphrase; the controller cannot type it: give it a key without one", f.SSHKey)
		}
		return nil, fmt.Errorf("--git-ssh-key %s is not an SSH private key", f.SSHKey)
	}
	hosts, err := readBounded("--known-hosts", f.KnownHosts)
	if err != nil {
		return nil, err
	}
	if err := checkKnownHosts(hosts); err != nil {
		return nil, fmt.Errorf("--known-hosts %s: %w", f.KnownHosts, err)
	}
	return &GitCredential{SSHKey: key, KnownHosts: hosts}, nil
}

// checkKnownHosts requires at least one host key line and no line that
// does not parse.
func checkKnownHosts(data []byte) error {
	n := 0
	for rest := data; len(bytes.TrimSpace(rest)) > 0; {
		_, _, _, _, next, err := ssh.ParseKnownHosts(rest)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("entry %d: %v", n+1, err)
		}
		n++
		rest = next
	}
	if n == 0 {
		return errors.New("no host key in it")
	}
	return nil
}

// readBounded reads the file named by flag, at most maxCredentialFile.
func readBounded(flag, name string) ([]byte, error) {
	if name == "" {
		return nil, fmt.Errorf("%s is required", flag)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCredentialFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, name, err)
	}
	if len(data) > maxCredentialFile {
		return nil, fmt.Errorf("%s %s is larger than %d KiB; that is no credential", flag, name, maxCredentialFile>>10)
	}
	return data, nil
}

// Secret is Secret propagit-git in namespace holding c, labelled as part of
// the installation there.
func (c *GitCredential) Secret(namespace string) *unstructured.Unstructured {
	data := map[string]any{}
	put := func(key string, v []byte) {
		if len(v) > 0 {
			data[key] = base64.StdEncoding.EncodeToString(v)
		}
	}
	put(keyToken, c.Token)
	put(keyIdentity, c.SSHKey)
	put(keyKnownHosts, c.KnownHosts)
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": GitSecretName, "namespace": namespace,
			"labels": map[string]any{LabelInstall: namespace, "app.kubernetes.io/name": "propagit"}},
		"type": "Opaque", "data": data}}
	return u
}
