package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The user the image runs as: distroless' "nonroot", which the deploy/
// manifests name in runAsUser.
const (
	uid      = 65532
	userName = "nonroot"
	home     = "/home/nonroot"
	// Entrypoint is where the binary lives in the image.
	Entrypoint = "/propagit"
)

// OCI annotation keys the image config carries as labels.
const (
	labelVersion  = "org.opencontainers.image.version"
	labelRevision = "org.opencontainers.image.revision"
	labelSource   = "org.opencontainers.image.source"
	labelCreated  = "org.opencontainers.image.created"
	labelTitle    = "org.opencontainers.image.title"
	labelLicenses = "org.opencontainers.image.licenses"
)

// Options say what goes into the image.
type Options struct {
	// Binary is the static propagit binary (CGO_ENABLED=0) for OS/Arch.
	Binary string
	// CACerts is a PEM bundle, e.g. Debian's /etc/ssl/certs/ca-certificates.crt.
	CACerts string
	// Version, Revision and Source become the OCI labels.
	Version, Revision, Source string
	// OS and Arch are the platform of Binary.
	OS, Arch string
	// Created is the image's creation time and every file's mtime; a fixed
	// value (the commit time) makes the build reproducible.
	Created time.Time
}

// Build assembles the image: a base layer (CA certificates, passwd and group
// naming the non-root user, /tmp and its home) and a layer holding only the
// binary. There is no shell and no package manager: nothing but these files.
func Build(o Options) (v1.Image, error) {
	certs, err := os.ReadFile(o.CACerts)
	if err != nil {
		return nil, fmt.Errorf("failed to read the CA certificates: %w", err)
	}
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("failed to read the binary: %w", err)
	}
	base, err := layer(o.Created, baseFiles(certs))
	if err != nil {
		return nil, fmt.Errorf("failed to build the base layer: %w", err)
	}
	app, err := layer(o.Created, []file{{name: Entrypoint, mode: 0o755, data: bin}})
	if err != nil {
		return nil, fmt.Errorf("failed to build the binary layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{CreatedBy: "propagit hack/image: ca-certificates, passwd", Created: v1.Time{Time: o.Created}}},
		mutate.Addendum{Layer: app, MediaType: types.OCILayer, History: v1.History{CreatedBy: "propagit hack/image: " + Entrypoint, Created: v1.Time{Time: o.Created}}},
	)
	if err != nil {
		return nil, fmt.Errorf("failed to append the layers: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("failed to read the image config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = o.OS, o.Arch
	cf.Created = v1.Time{Time: o.Created}
	cf.Config = v1.Config{
		Entrypoint: []string{Entrypoint},
		User:       fmt.Sprintf("%d:%d", uid, uid),
		WorkingDir: "/",
		Env:        []string{"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", "HOME=" + home},
		Labels: map[string]string{
			labelVersion:  o.Version,
			labelRevision: o.Revision,
			labelSource:   o.Source,
			labelCreated:  o.Created.UTC().Format(time.RFC3339),
			labelTitle:    "propagit",
			labelLicenses: "Apache-2.0",
		},
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("failed to set the image config: %w", err)
	}
	return img, nil
}

// file is one entry of a layer; a nil data with dir set is a folder.
type file struct {
	name     string
	mode     int64
	dir      bool
	uid, gid int
	data     []byte
}

func baseFiles(certs []byte) []file {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", userName, uid, uid, userName, home)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", userName, uid)
	return []file{
		{name: "/etc", dir: true, mode: 0o755},
		{name: "/etc/group", mode: 0o644, data: []byte(group)},
		{name: "/etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "/etc/ssl", dir: true, mode: 0o755},
		{name: "/etc/ssl/certs", dir: true, mode: 0o755},
		{name: "/etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: certs},
		{name: "/home", dir: true, mode: 0o755},
		{name: home, dir: true, mode: 0o700, uid: uid, gid: uid},
		{name: "/tmp", dir: true, mode: 0o1777},
	}
}

// layer writes files, sorted by name, into an uncompressed tar with fixed
// times and owners, and wraps it as a gzip OCI layer.
func layer(mtime time.Time, files []file) (v1.Layer, error) {
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{
			Name: path.Clean(f.name)[1:], Mode: f.mode, Uid: f.uid, Gid: f.gid,
			ModTime: mtime, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(f.data)),
		}
		if f.dir {
			h.Name += "/"
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("failed to write %s: %w", f.name, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, fmt.Errorf("failed to write %s: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
