package main

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const (
	testVersion  = "v9.9.9-imagetest"
	testRevision = "0123abc"
	testSource   = "https://example.com/propagit.git"
)

// TestImage builds the propagit binary and the image from it, writes both
// outputs, reads them back with go-containerregistry, checks the config and
// the exact file list (so no shell can hide in it), then runs the binary
// extracted from the image's binary layer.
func TestImage(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the image is linux; its binary cannot run here")
	}
	dir := t.TempDir()
	bin := buildPropagit(t, dir)
	certs := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(certs, []byte("-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	img, err := Build(Options{Binary: bin, CACerts: certs, Version: testVersion, Revision: testRevision,
		Source: testSource, OS: "linux", Arch: runtime.GOARCH, Created: created})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewTag("registry.example/propagit:" + testVersion)
	if err != nil {
		t.Fatal(err)
	}
	layoutDir, tarPath := filepath.Join(dir, "image"), filepath.Join(dir, "image.tar")
	if err := WriteLayout(layoutDir, img, ref); err != nil {
		t.Fatal(err)
	}
	if err := WriteTarball(tarPath, img, ref); err != nil {
		t.Fatal(err)
	}

	fromLayout := readLayout(t, layoutDir)
	fromTar, err := tarball.ImageFromPath(tarPath, &ref)
	if err != nil {
		t.Fatalf("failed to read the tarball: %v", err)
	}
	for what, got := range map[string]v1.Image{"OCI layout": fromLayout, "tarball": fromTar} {
		t.Run(what, func(t *testing.T) {
			checkConfig(t, got)
			checkFiles(t, got)
		})
	}
	checkBinary(t, fromLayout, filepath.Join(dir, "extracted"))
}

// buildPropagit builds cmd/propagit as make image does: static, the version
// in ldflags. Not -trimpath: untrimmed, it reuses every package the test
// suite compiled (make exports CGO_ENABLED=0) instead of compiling the
// whole dependency tree again; the paths inside do not change the image's
// shape, which is what this test checks.
func buildPropagit(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "propagit")
	cmd := exec.Command("go", "build", "-o", out,
		"-ldflags", "-s -w -X github.com/propagit/propagit/internal/cli.version="+testVersion+
			" -X github.com/propagit/propagit/internal/cli.commit="+testRevision,
		"./cmd/propagit")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	began := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/propagit: %v\n%s", err, b)
	}
	t.Logf("built the static binary in %s", time.Since(began).Round(time.Second))
	return out
}

func readLayout(t *testing.T, dir string) v1.Image {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("failed to open the OCI layout: %v", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Annotations[refNameAnnotation] != testVersion {
		t.Fatalf("index: want one image named %s, got %+v", testVersion, m.Manifests)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func checkConfig(t *testing.T, img v1.Image) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform = %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	if diff := cmp.Diff([]string{"/propagit"}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user = %q, want 65532:65532", cf.Config.User)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version":  testVersion,
		"org.opencontainers.image.revision": testRevision,
		"org.opencontainers.image.source":   testSource,
	} {
		if got := cf.Config.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
}

// checkFiles compares the flattened file system with the exact list the
// image must hold: a shell, a package manager or a stray file fails it.
func checkFiles(t *testing.T, img v1.Image) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var got []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, path.Clean("/"+h.Name))
		switch path.Base(h.Name) {
		case "sh", "bash", "ash", "dash", "zsh", "busybox":
			t.Errorf("the image holds a shell: %s", h.Name)
		}
		if h.Name == "propagit" && (h.Mode&0o111 == 0 || h.Typeflag != tar.TypeReg) {
			t.Errorf("/propagit is not an executable file: mode %o type %c", h.Mode, h.Typeflag)
		}
	}
	sort.Strings(got)
	want := []string{"/etc", "/etc/group", "/etc/passwd", "/etc/ssl", "/etc/ssl/certs",
		"/etc/ssl/certs/ca-certificates.crt", "/home", "/home/nonroot", "/propagit", "/tmp"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files in the image (-want +got):\n%s", diff)
	}
}

// checkBinary extracts /propagit from the image's last layer (the binary
// layer) and runs its version command: no chroot, the binary is static.
func checkBinary(t *testing.T, img v1.Image, dir string) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 2 {
		t.Fatalf("want 2 layers (base, binary), got %d (%v)", len(layers), err)
	}
	rc, err := layers[1].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := tr.Next()
	if err != nil || h.Name != "propagit" {
		t.Fatalf("binary layer: want propagit first, got %v (%v)", h, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "propagit")
	f, err := os.OpenFile(exe, os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, tr); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("propagit version from the image: %v", err)
	}
	var v struct{ Version, Revision, Platform string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("version -o json: %v\n%s", err, out)
	}
	if v.Version != testVersion || v.Revision != testRevision || v.Platform != "linux/"+runtime.GOARCH {
		t.Errorf("the image's binary reports %+v, want version %s revision %s", v, testVersion, testRevision)
	}
}
