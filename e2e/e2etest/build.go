package e2etest

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// BuildPropagit builds cmd/propagit into dir and returns the binary's
// path.
func BuildPropagit(dir string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "propagit")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/propagit")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/propagit: %v\n%s", err, out)
	}
	return bin, nil
}
