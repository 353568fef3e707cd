package testenv

import (
	"fmt"
	"os"
	"path/filepath"
)

// AssetsEnvVar names the environment variable that holds the folder of
// control-plane binaries.
const AssetsEnvVar = "PROPAGIT_ASSETS"

// assetsSubdir is the cache folder build-assets.sh fills, relative to $HOME.
const assetsSubdir = ".cache/propagit/assets/k8s-v1.37.2"

// Binary names inside the assets folder.
const (
	binEtcd              = "etcd"
	binAPIServer         = "kube-apiserver"
	binControllerManager = "kube-controller-manager"
	binScheduler         = "kube-scheduler"
	binKwok              = "kwok"
)

// DefaultAssetsDir returns $PROPAGIT_ASSETS, or the cache folder that
// `make test-assets` fills when the variable is unset.
func DefaultAssetsDir() string {
	if dir := os.Getenv(AssetsEnvVar); dir != "" {
		return dir
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "/root"
	}
	return filepath.Join(home, assetsSubdir)
}

// requiredBinaries lists the binaries a member needs.
func requiredBinaries(workloads bool) []string {
	bins := []string{binEtcd, binAPIServer}
	if workloads {
		bins = append(bins, binControllerManager, binScheduler, binKwok)
	}
	return bins
}

// checkAssets fails, naming the fix, when a required binary is missing or not
// executable.
func checkAssets(dir string, workloads bool) error {
	var missing []string
	for _, name := range requiredBinaries(workloads) {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("control-plane binaries %v missing in %s (set %s or run make test-assets)",
			missing, dir, AssetsEnvVar)
	}
	return nil
}
