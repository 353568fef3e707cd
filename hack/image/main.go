// Command image builds propagit's container image without a container
// engine: the static binary, CA certificates and a non-root user on an empty
// base, written as an OCI image layout and a docker-compatible tarball that
// any registry client can push (skopeo copy oci:DIR:TAG …, crane push TAR …).
// `make image` runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	var o Options
	var repo, layoutDir, tarPath, epoch string
	fs.StringVar(&o.Binary, "binary", "bin/linux_amd64/propagit", "static propagit binary (CGO_ENABLED=0)")
	fs.StringVar(&o.CACerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of CA certificates")
	fs.StringVar(&o.Version, "version", "dev", "image version label and tag")
	fs.StringVar(&o.Revision, "revision", "unknown", "source revision label")
	fs.StringVar(&o.Source, "source", "https://github.com/propagit/propagit", "source repository label")
	fs.StringVar(&o.OS, "os", "linux", "platform OS of the binary")
	fs.StringVar(&o.Arch, "arch", "amd64", "platform architecture of the binary")
	fs.StringVar(&repo, "repository", "ghcr.io/propagit/propagit", "image repository the tag is given in")
	fs.StringVar(&layoutDir, "oci-layout", "bin/image", "OCI image layout folder to write")
	fs.StringVar(&tarPath, "tarball", "bin/image.tar", "docker-compatible tarball to write")
	fs.StringVar(&epoch, "source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "creation time in Unix seconds (default: now)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.Created = time.Now().UTC().Truncate(time.Second)
	if epoch != "" {
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid -source-date-epoch %q: %w", epoch, err)
		}
		o.Created = time.Unix(sec, 0).UTC()
	}
	ref, err := name.NewTag(repo + ":" + o.Version)
	if err != nil {
		return fmt.Errorf("invalid image name %s:%s: %w", repo, o.Version, err)
	}
	img, err := Build(o)
	if err != nil {
		return err
	}
	if err := WriteLayout(layoutDir, img, ref); err != nil {
		return err
	}
	if err := WriteTarball(tarPath, img, ref); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s@%s\n  OCI layout: %s\n  tarball:    %s\n", ref, digest, layoutDir, tarPath)
	return nil
}
