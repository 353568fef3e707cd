// Command fleetgen writes a benchmark fleet (e2e/fleet) to disk: the
// propagit repository under OUT/repo and, with -kustomize, the same
// scenario as per-cluster kustomize overlays under OUT/kustomize. The same
// flags always write the same files.
//
//	go run ./e2e/tools/fleetgen -templates 10000 -clusters 1000 -out /tmp/fleet
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/e2e/fleet"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fleetgen:", err)
		os.Exit(1)
	}
}

func run() error {
	templates := flag.Int("templates", 1000, "resource templates (a multiple of 20)")
	clusters := flag.Int("clusters", 100, "member clusters (a multiple of 4)")
	out := flag.String("out", "", "folder to create; must not exist")
	kustomize := flag.Bool("kustomize", false, "also write the per-cluster kustomize overlays")
	flag.Parse()
	if *out == "" {
		return errors.New("-out is required")
	}
	if _, err := os.Lstat(*out); err == nil {
		return fmt.Errorf("%s exists; fleetgen writes only a new folder", *out)
	}
	m, err := fleet.New(*templates, *clusters)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	fs := filesys.MakeFsOnDisk()
	if err := m.WriteRepo(fs, filepath.Join(abs, "repo")); err != nil {
		return err
	}
	if *kustomize {
		if err := m.WriteKustomize(fs, filepath.Join(abs, "kustomize")); err != nil {
			return err
		}
	}
	fmt.Printf("%d templates on %d clusters, %d objects: %s\n", len(m.Templates), len(m.Clusters), m.Objects(), abs)
	return nil
}
