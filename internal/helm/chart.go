package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/ignore"

	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
)

// Limits bound what one chart may be and do.
type Limits struct {
	// MaxFiles and MaxBytes bound a chart's files (subcharts included,
	// archives counted expanded).
	MaxFiles int
	MaxBytes int64
	// MaxOutput bounds the YAML one render produces.
	MaxOutput int64
	// Timeout bounds one render; past it the worker is killed.
	Timeout time.Duration
	// MaxMemory is the address space a render's worker may map beyond
	// its start.
	MaxMemory uint64
}

// DefaultLimits are ample for the largest public charts (the biggest
// common chart, kube-prometheus-stack, is about 2 MiB and 600 files
// expanded, and renders in about a second).
func DefaultLimits() Limits {
	return Limits{MaxFiles: 5000, MaxBytes: 32 << 20, MaxOutput: 32 << 20, Timeout: 30 * time.Second, MaxMemory: 1 << 30}
}

// Chart is a chart's files, checked against the limits, and their digest.
type Chart struct {
	// Name and Version are Chart.yaml's.
	Name, Version string
	// Files are the chart's files by slash path inside the chart folder.
	Files map[string][]byte
	// Digest is "sha256:<hex>" of the files (names and contents), the
	// same whatever order they were read in.
	Digest string
}

// FromFiles reads a chart from its folder's files (slash paths relative
// to the folder), leaving out what its .helmignore lists, as `helm
// template` does for a chart folder.
func FromFiles(files map[string][]byte, lim Limits) (*Chart, error) {
	kept := files
	if data, ok := files[".helmignore"]; ok {
		rules, err := ignore.Parse(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf(".helmignore: %v", err)
		}
		rules.AddDefaults()
		kept = map[string][]byte{}
		for name, d := range files {
			if !ignoredFile(rules, name) {
				kept[name] = d
			}
		}
	}
	return newChart(kept, lim)
}

// ignoredFile reports whether rules leave out name or a folder above it.
func ignoredFile(rules *ignore.Rules, name string) bool {
	parts := strings.Split(name, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		if rules.Ignore(p, fileInfo{name: parts[i], dir: i < len(parts)-1}) {
			return true
		}
	}
	return false
}

// FromArchive reads a chart archive (.tgz), as pulled from a chart
// repository or an OCI registry.
func FromArchive(data []byte, lim Limits) (*Chart, error) {
	if int64(len(data)) > lim.MaxBytes {
		return nil, fmt.Errorf("chart archive is %d bytes, over the limit of %d", len(data), lim.MaxBytes)
	}
	if err := archiveWithin(data, lim); err != nil {
		return nil, err
	}
	files, err := archive.LoadArchiveFiles(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("cannot read the chart archive: %v", err)
	}
	m := make(map[string][]byte, len(files))
	for _, f := range files {
		m[f.Name] = f.Data
		if len(m) > lim.MaxFiles {
			break
		}
	}
	return newChart(m, lim)
}

// archiveWithin reads an archive through, keeping nothing, and fails as
// soon as it holds more files or bytes than lim: Helm's loader expands
// an archive whole (up to 100 MiB of data and any number of entries)
// before newChart could count, in the controller's memory.
func archiveWithin(data []byte, lim Limits) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("cannot read the chart archive: %v", err)
	}
	tr := tar.NewReader(zr)
	var entries, files int
	var size int64
	for {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot read the chart archive: %v", err)
		}
		entries++
		if !hd.FileInfo().IsDir() {
			files++
			size += max(hd.Size, 0)
		}
		switch {
		case files > lim.MaxFiles || entries > 2*lim.MaxFiles:
			return fmt.Errorf("chart has more than %d files", lim.MaxFiles)
		case size > lim.MaxBytes:
			return fmt.Errorf("chart files are over the limit of %d bytes", lim.MaxBytes)
		}
	}
}

func newChart(files map[string][]byte, lim Limits) (*Chart, error) {
	if len(files) > lim.MaxFiles {
		return nil, fmt.Errorf("chart has more than %d files", lim.MaxFiles)
	}
	names := make([]string, 0, len(files))
	var total int64
	for name, data := range files {
		if !validFileName(name) {
			return nil, fmt.Errorf("chart file name %q is not a plain relative path", name)
		}
		total += int64(len(data))
		names = append(names, name)
	}
	if total > lim.MaxBytes {
		return nil, fmt.Errorf("chart files are %d bytes, over the limit of %d", total, lim.MaxBytes)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, name := range names {
		fmt.Fprintf(h, "%d:%s%d:", len(name), name, len(files[name]))
		h.Write(files[name])
	}
	c := &Chart{Files: files, Digest: "sha256:" + hex.EncodeToString(h.Sum(nil))}
	if _, ok := files["Chart.yaml"]; !ok {
		return nil, fmt.Errorf("not a chart: no Chart.yaml")
	}
	hc, err := c.load()
	if err != nil {
		return nil, err
	}
	c.Name, c.Version = hc.Name(), hc.Metadata.Version
	return c, nil
}

// validFileName accepts clean relative slash paths only.
func validFileName(name string) bool {
	return name != "" && !path.IsAbs(name) && path.Clean(name) == name && name != ".." && !strings.HasPrefix(name, "../") && !strings.Contains(name, "\\")
}

// load builds the Helm SDK's chart (subcharts included) from the files.
func (c *Chart) load() (*chartv2.Chart, error) {
	names := make([]string, 0, len(c.Files))
	for name := range c.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	files := make([]*archive.BufferedFile, 0, len(names))
	for _, name := range names {
		files = append(files, &archive.BufferedFile{Name: name, Data: c.Files[name]})
	}
	hc, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("cannot load the chart: %v", err)
	}
	if err := hc.Validate(); err != nil {
		return nil, fmt.Errorf("invalid chart: %v", err)
	}
	return hc, nil
}
