package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/propagit/propagit/internal/verify"
	"github.com/propagit/propagit/internal/verify/verifytest"
)

// TestSupplyChainJoinHandsTheWorksKey: join --works-public-key puts the
// controller's public keys (old and new while rotating) in a ConfigMap the
// agent mounts and reads with --works-trusted-keys; the agent trusts
// exactly those keys. A private key, or the flag for a push member or the
// cr store, is refused.
func TestSupplyChainJoinHandsTheWorksKey(t *testing.T) {
	member, _ := recordingServer(t)
	memberKC := kubeconfigFor(t, member, "edge-3")
	old, next := verifytest.SSHKey(t, "propagit-controller"), verifytest.PGPKey(t, "propagit controller", "propagit@example.com", nil)
	pub := verifytest.TrustedKeys(t, old, next)
	stdout, _ := runCLI(t, 0, "join", "edge-3", "--kubeconfig", memberKC, "--mode", "pull", "--dry-run",
		"--works-repo", "https://git.example.com/works-{cluster}.git", "--works-public-key", pub)
	docs := yamlDocs(t, stdout)
	cm := docs["ConfigMap/propagit-system/propagit-works-keys"]
	if cm == nil {
		t.Fatalf("no ConfigMap of the works keys: %v", docNames(docs))
	}
	data, _ := cm["data"].(map[string]any)["trusted-keys"].(string)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "trusted-keys"), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	ks, err := verify.ReadKeys(dir, verify.DefaultLimits())
	if err != nil || ks.Len() != 2 {
		t.Fatalf("the ConfigMap's keys: %v, %d keys, want 2", err, ks.Len())
	}
	if !strings.Contains(stdout, "--works-trusted-keys=/etc/propagit/works-keys") || !strings.Contains(stdout, "configMap: {name: propagit-works-keys}") {
		t.Errorf("the agent does not mount and read the keys:\n%s", stdout)
	}

	priv := verifytest.WriteFile(t, "id", old.Private)
	for _, args := range [][]string{
		{"--mode", "pull", "--works-public-key", priv},
		{"--mode", "push", "--works-public-key", pub},
	} {
		_, stderr := runCLI(t, 2, append([]string{"join", "edge-3", "--kubeconfig", memberKC, "--dry-run"}, args...)...)
		if !strings.Contains(stderr, "--works-public-key") {
			t.Errorf("%v: %s", args, stderr)
		}
	}
}
