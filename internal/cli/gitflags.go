package cli

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/spf13/cobra"

	"github.com/propagit/propagit/internal/source"
)

// gitOptions are the flags naming a Git repository and its credentials.
// Secrets are read from files or the environment, never from flags, so they
// do not show in process listings.
type gitOptions struct {
	url          string
	username     string
	passwordFile string
	sshKey       string
	knownHosts   string
}

func (g *gitOptions) bindFlags(cmd *cobra.Command, name, usage string) {
	f := cmd.Flags()
	f.StringVar(&g.url, name, "", usage+" (file://, https:// or ssh://)")
	f.StringVar(&g.username, "git-username", "git", "user name for HTTPS basic auth")
	f.StringVar(&g.passwordFile, "git-password-file", "", "file holding the HTTPS password or token (or set PROPAGIT_GIT_TOKEN)")
	f.StringVar(&g.sshKey, "git-ssh-key", "", "private key file for ssh:// URLs")
	f.StringVar(&g.knownHosts, "known-hosts", "", "known_hosts file the SSH server's host key must be in (default: $SSH_KNOWN_HOSTS, else ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts)")
}

func (g *gitOptions) auth() (transport.AuthMethod, error) {
	switch {
	case strings.HasPrefix(g.url, "ssh://") || strings.Contains(g.url, "@") && !strings.Contains(g.url, "://"):
		if g.sshKey == "" {
			if g.knownHosts != "" {
				return nil, fmt.Errorf("--known-hosts needs --git-ssh-key")
			}
			return nil, nil
		}
		keys, err := gitssh.NewPublicKeysFromFile("git", g.sshKey, "")
		if err != nil {
			return nil, fmt.Errorf("failed to read --git-ssh-key: %w", err)
		}
		if g.knownHosts != "" {
			if keys.HostKeyCallback, err = gitssh.NewKnownHostsCallback(g.knownHosts); err != nil {
				return nil, fmt.Errorf("failed to read --known-hosts: %w", err)
			}
		}
		return keys, nil
	case strings.HasPrefix(g.url, "http://") || strings.HasPrefix(g.url, "https://"):
		token := os.Getenv("PROPAGIT_GIT_TOKEN")
		if g.passwordFile != "" {
			b, err := os.ReadFile(g.passwordFile)
			if err != nil {
				return nil, fmt.Errorf("failed to read --git-password-file: %w", err)
			}
			token = strings.TrimSpace(string(b))
		}
		if token == "" {
			return nil, nil
		}
		return &githttp.BasicAuth{Username: g.username, Password: token}, nil
	}
	return nil, nil
}

// safeURL is the URL without credentials, for logs.
func (g *gitOptions) safeURL() string {
	u, err := url.Parse(g.url)
	if err != nil {
		return "<invalid URL>"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// cacheDir is the cache folder of this repository under root, keyed by its
// URL without credentials (see source.CacheKey).
func (g *gitOptions) cacheDir(root string) string {
	return filepath.Join(root, source.CacheKey(g.url))
}
