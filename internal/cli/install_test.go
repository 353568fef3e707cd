package cli

import (
	"strings"
	"testing"
)

// TestInstallDryRunGolden prints the manifests for every flag set away from
// its default, so the golden file shows each one landing in the Deployment.
func TestInstallDryRunGolden(t *testing.T) {
	stdout, _ := runCLI(t, 0, "install", "--dry-run", "-o", "yaml",
		"--repo", "https://git.example.com/fleet.git", "--branch", "prod", "--path", "clusters/eu",
		"--works-store", "cr", "--webhook-secret", "fleet-hook", "--webhook-provider", "gitlab",
		"--replicas", "3", "--image", "registry.example.com/propagit:v0.3.0", "--namespace", "fleet-ops",
		"--service-monitor")
	golden(t, "install.yaml", stdout)
	if strings.Contains(stdout, "kind: Secret\n") {
		t.Error("install must never print a Secret")
	}
}

func TestInstallRefusesBadFlags(t *testing.T) {
	for name, args := range map[string][]string{
		"no repo":          {"install", "--dry-run"},
		"unknown store":    {"install", "--dry-run", "--repo", "https://x/y.git", "--works-store", "s3"},
		"zero replicas":    {"install", "--dry-run", "--repo", "https://x/y.git", "--replicas", "0"},
		"bad namespace":    {"install", "--dry-run", "--repo", "https://x/y.git", "--namespace", "Ops_1"},
		"escaping path":    {"install", "--dry-run", "--repo", "https://x/y.git", "--path", "../other"},
		"unknown provider": {"install", "--dry-run", "--repo", "https://x/y.git", "--webhook-secret", "h", "--webhook-provider", "bitbucket"},
		"unknown format":   {"install", "--dry-run", "--repo", "https://x/y.git", "-o", "wide"},
	} {
		t.Run(name, func(t *testing.T) { runCLI(t, 2, args...) })
	}
}

// TestInstallRefusesCredentialsInRepo: a token in --repo is refused (exit
// 2) before anything is printed or applied, and the error points at the
// Secret without quoting the token.
func TestInstallRefusesCredentialsInRepo(t *testing.T) {
	stdout, stderr := runCLI(t, 2, "install", "--dry-run", "--repo", "https://bot:glpat-s3cret@git.example.com/fleet.git")
	if stdout != "" || strings.Contains(stdout+stderr, "s3cret") || !strings.Contains(stderr, "propagit-git --from-literal=token=") {
		t.Errorf("stdout %q, stderr %q: want nothing printed and an error pointing at the Secret, without the token", stdout, stderr)
	}
}
