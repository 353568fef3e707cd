package main

import (
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// refNameAnnotation names an image in an OCI layout's index, the name
// `skopeo copy oci:DIR:NAME` looks up.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout writes img as a fresh OCI image layout in dir (replacing what
// was there), its index entry named by tag (the tag part of ref).
func WriteLayout(dir string, img v1.Image, ref name.Tag) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("failed to clear %s: %w", dir, err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("failed to create the OCI layout %s: %w", dir, err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{refNameAnnotation: ref.TagStr()})); err != nil {
		return fmt.Errorf("failed to write the image into %s: %w", dir, err)
	}
	return nil
}

// WriteTarball writes img as a docker-compatible tarball (docker load,
// crane push, skopeo copy docker-archive:) tagged ref.
func WriteTarball(path string, img v1.Image, ref name.Tag) error {
	if err := tarball.WriteToFile(path, ref, img); err != nil {
		return fmt.Errorf("failed to write %s: %w", path, err)
	}
	return nil
}
