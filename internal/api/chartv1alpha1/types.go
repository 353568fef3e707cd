// Package chartv1alpha1 is the HelmChart object: a Helm chart release
// declared in the fleet repository. It is a resource template like any
// other (policies select it, overrides change it per cluster); each
// cluster it is placed on gets the objects the chart renders for that
// cluster, never the HelmChart itself.
package chartv1alpha1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
)

const (
	Group      = "propagit.io"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
	Kind       = "HelmChart"
)

// Spec is a HelmChart's spec. A Helm user reads it as `helm template
// RELEASE CHART --version VERSION --repo REPO -f FILE... --set ...`.
type Spec struct {
	// Chart is the chart: a folder in the fleet repository (a path
	// relative to the file declaring the HelmChart, such as
	// "../../charts/web") when RepoURL is empty, else the chart's name in
	// that repository.
	Chart string `json:"chart"`
	// RepoURL is a chart repository (https://…, serving index.yaml) or an
	// OCI registry path (oci://host/path); empty for a chart in the repo.
	RepoURL string `json:"repoURL,omitempty"`
	// Version is the chart's exact version; required with RepoURL.
	Version string `json:"version,omitempty"`
	// Digest, when set, pins the chart archive ("sha256:<hex>").
	Digest string `json:"digest,omitempty"`
	// ReleaseName defaults to the HelmChart's name.
	ReleaseName string `json:"releaseName,omitempty"`
	// ValuesFiles are values files in the fleet repository, relative to
	// the declaring file, merged in order over the chart's values.yaml.
	ValuesFiles []string `json:"valuesFiles,omitempty"`
	// Values are merged last, over the values files (what --set does).
	Values map[string]any `json:"values,omitempty"`
}

// Remote reports whether the chart comes from a repository or registry.
func (s *Spec) Remote() bool { return s.RepoURL != "" }

var (
	chartName = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$`)
	version   = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	digest    = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// Decode reads a HelmChart's spec strictly: an unknown field is an error
// (a typo in `valuesFile` must not drop the values silently).
func Decode(obj map[string]any) (*Spec, error) {
	raw, ok := obj["spec"]
	if !ok {
		return nil, errors.New("spec: required")
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("spec: %v", err)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var s Spec
	if err := d.Decode(&s); err != nil {
		return nil, fmt.Errorf("spec: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return &s, s.Validate()
}

// Validate checks the fields on their own.
func (s *Spec) Validate() error {
	var errs []error
	switch {
	case s.Chart == "":
		errs = append(errs, errors.New("spec.chart: required"))
	case s.Remote() && !chartName.MatchString(s.Chart):
		errs = append(errs, fmt.Errorf("spec.chart: %q is not a chart name (lowercase letters, digits, '.', '_', '-')", s.Chart))
	case !s.Remote() && (path.IsAbs(s.Chart) || strings.Contains(s.Chart, "\\")):
		errs = append(errs, fmt.Errorf("spec.chart: %q must be a folder relative to this file", s.Chart))
	}
	if s.Remote() {
		if !strings.HasPrefix(s.RepoURL, "https://") && !strings.HasPrefix(s.RepoURL, "http://") && !strings.HasPrefix(s.RepoURL, "oci://") {
			errs = append(errs, fmt.Errorf("spec.repoURL: %q must start with https://, http:// or oci://", s.RepoURL))
		}
		if !version.MatchString(s.Version) {
			errs = append(errs, fmt.Errorf("spec.version: %q must be an exact chart version such as 1.2.3 (no ranges: a fleet is pinned)", s.Version))
		}
	} else if s.Version != "" || s.Digest != "" {
		errs = append(errs, errors.New("spec.version and spec.digest are for a chart from spec.repoURL; a chart in the repository is pinned by the commit"))
	}
	if s.Digest != "" && !digest.MatchString(s.Digest) {
		errs = append(errs, fmt.Errorf("spec.digest: %q must be sha256:<64 hex digits>", s.Digest))
	}
	for i, f := range s.ValuesFiles {
		if f == "" || path.IsAbs(f) || strings.Contains(f, "\\") {
			errs = append(errs, fmt.Errorf("spec.valuesFiles[%d]: %q must be a file relative to this file", i, f))
		}
	}
	return errors.Join(errs...)
}

// IsHelmChart reports whether apiVersion and kind are a HelmChart's.
func IsHelmChart(apiVersion, kind string) bool { return apiVersion == APIVersion && kind == Kind }
