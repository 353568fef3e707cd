// Package fetch brings remote Helm charts (a HelmChart object's repoURL,
// chart, version and optional digest) into a content-addressed cache, and
// reads them back offline.
//
// Everything from the network is hostile: every read is bounded, every
// archive is verified against a sha256 digest (the repository index's, the
// OCI manifest's layer digest, and the Ref's pin when set) before it is
// cached or returned, and a credential goes only to the exact host it is
// keyed by, never with a redirect or a download URL on another host.
//
// The controller fetches (Fetcher with Offline false); render, diff and
// lint in a pull-request job read only the cache (Offline true), where a
// chart not cached is an error wrapping ErrNotCached.
package fetch

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Ref names a remote chart exactly.
//
// RepoURL is an https:// (or http://) chart repository serving index.yaml,
// or oci://host[:port]/path for a chart in an OCI registry (the chart is
// then the repository host/path/<chart>, the version its tag).
//
// Digest, when set, pins the content: "sha256:<64 hex>". For a chart
// repository it is the sha256 of the chart archive (.tgz). For OCI it may
// be either the chart layer's digest (which is the same sha256 of the .tgz)
// or the manifest's digest (what `helm push` and `helm pull` print as
// "Digest:"); both are checked against what the registry serves.
type Ref struct {
	RepoURL string
	Chart   string
	Version string
	Digest  string
}

// IsOCI tells whether the chart is in an OCI registry.
func (r Ref) IsOCI() bool {
	return strings.HasPrefix(strings.ToLower(r.RepoURL), "oci://")
}

// String names the chart for messages: "oci://host/path/chart:1.2.3" or
// "https://host/repo web 1.2.3".
func (r Ref) String() string {
	base := strings.TrimRight(r.RepoURL, "/")
	if r.IsOCI() {
		return base + "/" + r.Chart + ":" + r.Version
	}
	return base + " " + r.Chart + " " + r.Version
}

var (
	chartNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	// Semantic Versioning 2.0.0, with the leading "v" Helm tolerates
	// (cert-manager's charts are "v1.14.4"); no ranges, no wildcards.
	semverRE = regexp.MustCompile(`^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
		`(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?` +
		`(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$`)
	digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	// an OCI repository path component (distribution spec)
	ociPathRE = regexp.MustCompile(`^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$`)
)

// Validate checks the Ref before any network or cache access.
func (r Ref) Validate() error {
	if r.RepoURL == "" {
		return errors.New("repoURL is empty")
	}
	u, err := url.Parse(r.RepoURL)
	if err != nil {
		return fmt.Errorf("repoURL %q is not a URL", r.RepoURL)
	}
	switch u.Scheme {
	case "https", "http", "oci":
	default:
		return fmt.Errorf("repoURL %q: the scheme must be https, http or oci", r.RepoURL)
	}
	if u.User != nil {
		// never echo it: it may hold a password
		return errors.New("repoURL must not hold a user name or password (credentials come from a Secret outside Git)")
	}
	if u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("repoURL %q has no host", r.RepoURL)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return fmt.Errorf("repoURL %q must not have a query or fragment", r.RepoURL)
	}
	if u.Scheme == "oci" {
		p := strings.Trim(u.Path, "/")
		if p != "" {
			for _, c := range strings.Split(p, "/") {
				if !ociPathRE.MatchString(c) {
					return fmt.Errorf("repoURL %q: %q is not a valid OCI repository path component", r.RepoURL, c)
				}
			}
		}
	} else {
		for _, c := range strings.Split(u.Path, "/") {
			if c == ".." || c == "." {
				return fmt.Errorf("repoURL %q must not contain %q", r.RepoURL, c)
			}
		}
	}
	if r.Chart == "" {
		return errors.New("chart is empty")
	}
	if len(r.Chart) > 250 || !chartNameRE.MatchString(r.Chart) || strings.Contains(r.Chart, "..") {
		return fmt.Errorf("chart %q is not a plain chart name (letters, digits, '.', '_', '-'; no '/' or '..')", r.Chart)
	}
	if u.Scheme == "oci" && !ociPathRE.MatchString(r.Chart) {
		return fmt.Errorf("chart %q is not a valid OCI repository name (lower case letters, digits, '.', '_', '-')", r.Chart)
	}
	if r.Version == "" {
		return errors.New("version is empty (an exact version is required)")
	}
	if len(r.Version) > 128 || !semverRE.MatchString(r.Version) {
		return fmt.Errorf("version %q is not an exact semantic version (like 1.2.3; ranges are not allowed)", r.Version)
	}
	if r.Digest != "" && !digestRE.MatchString(r.Digest) {
		return fmt.Errorf("digest %q must be sha256:<64 lower-case hex digits>", r.Digest)
	}
	return nil
}

// Credential is a user name and password (or token) for one host.
type Credential struct {
	Username, Password string
}

// String never shows the password.
func (c Credential) String() string { return c.Username + ":<redacted>" }

// GoString never shows the password.
func (c Credential) GoString() string { return c.String() }

// Credentials maps a host[:port] (lower case) to its credential. It comes
// from a Secret outside Git. A credential is sent only to exactly that
// host[:port].
type Credentials map[string]Credential

func (cs Credentials) lookup(host string) (Credential, bool) {
	if cs == nil {
		return Credential{}, false
	}
	c, ok := cs[strings.ToLower(host)]
	return c, ok
}

const maxDockerConfig = 64 << 10

// ParseDockerConfig reads a .dockerconfigjson Secret value:
// {"auths":{"host":{"username":..,"password":..}|{"auth":"<base64 user:pass>"}}}.
// Keys written as URLs ("https://host:5000/v1/") are normalised to
// host[:port]. Errors never contain a credential.
func ParseDockerConfig(data []byte) (Credentials, error) {
	if len(data) > maxDockerConfig {
		return nil, fmt.Errorf("docker config is too large (%d bytes, at most %d)", len(data), maxDockerConfig)
	}
	var doc struct {
		Auths map[string]struct {
			Username string `json:"username"`
			Password string `json:"password"`
			Auth     string `json:"auth"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		// json errors may quote input: say only where
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("docker config is not valid JSON (at byte %d)", se.Offset)
		}
		return nil, errors.New("docker config is not of the form {\"auths\":{\"host\":{...}}}")
	}
	if doc.Auths == nil {
		return nil, errors.New("docker config has no \"auths\"")
	}
	out := Credentials{}
	for key, a := range doc.Auths {
		host, err := normaliseHostKey(key)
		if err != nil {
			return nil, err
		}
		c := Credential{Username: a.Username, Password: a.Password}
		if a.Auth != "" && c.Username == "" && c.Password == "" {
			raw, err := base64.StdEncoding.DecodeString(a.Auth)
			if err != nil {
				raw, err = base64.RawStdEncoding.DecodeString(a.Auth)
			}
			if err != nil {
				return nil, fmt.Errorf("docker config: the auth of %q is not base64", host)
			}
			user, pass, ok := strings.Cut(string(raw), ":")
			if !ok {
				return nil, fmt.Errorf("docker config: the auth of %q is not user:password", host)
			}
			c = Credential{Username: user, Password: pass}
		}
		if c.Username == "" && c.Password == "" {
			continue
		}
		out[host] = c
	}
	return out, nil
}

func normaliseHostKey(key string) (string, error) {
	k := strings.TrimSpace(key)
	if strings.Contains(k, "://") {
		u, err := url.Parse(k)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("docker config: key %q is not a host or URL", key)
		}
		k = u.Host
	} else if i := strings.IndexByte(k, '/'); i >= 0 {
		k = k[:i]
	}
	if k == "" || strings.ContainsAny(k, "@ \t") {
		return "", fmt.Errorf("docker config: key %q is not a host", key)
	}
	return strings.ToLower(k), nil
}
