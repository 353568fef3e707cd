package cluster

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestRenewLeavesKubeconfigFilesAlone: a member reached through a file in
// KubeconfigDir is not renewed through the hub, whose Secrets are not the
// credential in use; a controller run with --kubeconfig-dir and a hub (to
// shard) used to look for the member's Secret and log an error for every
// member every minute (found by the soak, e2e/soak).
func TestRenewLeavesKubeconfigFilesAlone(t *testing.T) {
	cr := newCreds(t)
	cr.Writer = cr.Hub.(client.Client)
	cr.KubeconfigDir = t.TempDir()
	if err := os.WriteFile(filepath.Join(cr.KubeconfigDir, "m3.kubeconfig"), []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	c := m1Cluster(nil)
	c.Name = "m3" // a member with a kubeconfig file and no Secret on the hub
	r, err := cr.Renew(context.Background(), c, time.Now())
	if err != nil {
		t.Fatalf("Renew of a member with a kubeconfig file: %v", err)
	}
	if r.Renewed {
		t.Errorf("Renew renewed a member's token that comes from a kubeconfig file: %+v", r)
	}
}
