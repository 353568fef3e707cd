package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallDryRunGolden prints the manifests for every flag set away from
// its default, so the golden file shows each one landing in the Deployment.
func TestInstallDryRunGolden(t *testing.T) {
	stdout, _ := runCLI(t, 0, "install", "--dry-run", "-o", "yaml",
		"--repo", "https://git.example.com/fleet.git", "--branch", "prod", "--path", "clusters/eu",
		"--works-store", "cr", "--webhook-secret", "fleet-hook", "--webhook-provider", "gitlab",
		"--replicas", "3", "--image", "registry.example.com/propagit:v0.3.0", "--controller-namespace", "fleet-ops",
		"--service-monitor")
	golden(t, "install.yaml", stdout)
	if strings.Contains(stdout, "kind: Secret\n") {
		t.Error("install must never print a Secret")
	}
}

// TestInstallRefusesBadFlags: each bad flag is refused (exit 2) before
// anything is printed, every other flag being valid.
func TestInstallRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "id")
	writeFile(t, key, "not a key")
	ok := []string{"install", "--dry-run", "--image", "registry.example.com/propagit:v0.3.0"}
	for name, args := range map[string][]string{
		"no repo":                {},
		"unknown store":          {"--repo", "https://x/y.git", "--works-store", "s3"},
		"zero replicas":          {"--repo", "https://x/y.git", "--replicas", "0"},
		"bad namespace":          {"--repo", "https://x/y.git", "--controller-namespace", "Ops_1"},
		"escaping path":          {"--repo", "https://x/y.git", "--path", "../other"},
		"unknown provider":       {"--repo", "https://x/y.git", "--webhook-secret", "h", "--webhook-provider", "bitbucket"},
		"unknown format":         {"--repo", "https://x/y.git", "-o", "wide"},
		"ssh key over https":     {"--repo", "https://x/y.git", "--git-ssh-key", key},
		"token over ssh":         {"--repo", "git@x:y.git", "--git-token-file", key},
		"ssh without known host": {"--repo", "ssh://git@x/y.git", "--git-ssh-key", key},
		"not a private key":      {"--repo", "ssh://git@x/y.git", "--git-ssh-key", key, "--known-hosts", key},
	} {
		t.Run(name, func(t *testing.T) {
			stdout, _ := runCLI(t, 2, append(ok[:len(ok):len(ok)], args...)...)
			if stdout != "" {
				t.Errorf("printed %q", stdout)
			}
		})
	}
}

// TestInstallNeedsAnImageOnADevelopmentBuild: a development build has no
// release image, and install says so instead of deploying :latest.
func TestInstallNeedsAnImageOnADevelopmentBuild(t *testing.T) {
	_, stderr := runCLI(t, 2, "install", "--dry-run", "--repo", "https://x/y.git")
	if !strings.Contains(stderr, "--image") {
		t.Errorf("stderr %q: want --image named", stderr)
	}
}

// TestInstallWithoutKubeconfigFails: with nothing to apply to, install
// fails (it used to print the manifests and exit 0, installing nothing).
func TestInstallWithoutKubeconfigFails(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	stdout, stderr := runCLI(t, 2, "install", "--repo", "https://x/y.git", "--image", "registry.example.com/propagit:v0.3.0")
	if stdout != "" || !strings.Contains(stderr, "no kubeconfig found") || !strings.Contains(stderr, "pass --dry-run") {
		t.Errorf("stdout %q, stderr %q: want no manifests and an error naming --dry-run", stdout, stderr)
	}
}

// TestInstallRefusesCredentialsInRepo: a token in --repo is refused (exit
// 2) before anything is printed or applied, and the error points at the
// Secret without quoting the token.
func TestInstallRefusesCredentialsInRepo(t *testing.T) {
	stdout, stderr := runCLI(t, 2, "install", "--dry-run", "--image", "registry.example.com/propagit:v0.3.0", "--repo", "https://bot:glpat-s3cret@git.example.com/fleet.git")
	if stdout != "" || strings.Contains(stdout+stderr, "s3cret") || !strings.Contains(stderr, "propagit-git --from-literal=token=") {
		t.Errorf("stdout %q, stderr %q: want nothing printed and an error pointing at the Secret, without the token", stdout, stderr)
	}
}
