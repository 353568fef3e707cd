package fetch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

const (
	ociManifestType  = "application/vnd.oci.image.manifest.v1+json"
	helmChartLayer   = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	helmConfigType   = "application/vnd.cncf.helm.config.v1+json"
	ociIndexType     = "application/vnd.oci.image.index.v1+json"
	dockerListType   = "application/vnd.docker.distribution.manifest.list.v2+json"
	defaultPullScope = "pull"
)

type ociDescriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
}

type ociManifest struct {
	SchemaVersion int             `json:"schemaVersion"`
	MediaType     string          `json:"mediaType"`
	Config        ociDescriptor   `json:"config"`
	Layers        []ociDescriptor `json:"layers"`
}

// ociSession talks to one registry host for one repository: the
// registry v2 API with basic auth, or the bearer-token exchange on a 401.
type ociSession struct {
	f      *Fetcher
	c      *http.Client
	scheme string
	host   string // host[:port]
	repo   string // path/chart
	cred   Credential
	hasCrd bool
	auth   string // the Authorization header once known
}

// fetchOCI fetches the chart's manifest (tag = version, '+' written '_'
// as Helm does), its Helm chart layer, and verifies the layer against the
// manifest's digest and ref.Digest (the layer's or the manifest's).
func (f *Fetcher) fetchOCI(ctx context.Context, ref Ref) (fetched, error) {
	u, err := url.Parse(ref.RepoURL)
	if err != nil {
		return fetched{}, err
	}
	s := &ociSession{f: f, c: f.client(), scheme: "https", host: u.Host}
	if f.PlainHTTP {
		s.scheme = "http"
	}
	s.repo = ref.Chart
	if p := strings.Trim(u.Path, "/"); p != "" {
		s.repo = p + "/" + ref.Chart
	}
	s.cred, s.hasCrd = f.Credentials.lookup(u.Host)
	tag := strings.ReplaceAll(ref.Version, "+", "_")

	mURL := s.url("/v2/" + s.repo + "/manifests/" + tag)
	body, resp, err := s.get(ctx, "the chart manifest", mURL, http.Header{"Accept": {ociManifestType}}, maxManifest)
	if err != nil {
		return fetched{}, err
	}
	manifestDigest := sha256Digest(body)
	var m ociManifest
	if err := json.Unmarshal(body, &m); err != nil {
		return fetched{}, fmt.Errorf("the chart manifest from %s is not valid JSON", s.host)
	}
	ct := resp.Header.Get("Content-Type")
	if m.MediaType == ociIndexType || m.MediaType == dockerListType || strings.HasPrefix(ct, ociIndexType) || strings.HasPrefix(ct, dockerListType) {
		return fetched{}, fmt.Errorf("%s is an image index, not a Helm chart", ref)
	}
	if m.SchemaVersion != 2 {
		return fetched{}, fmt.Errorf("the chart manifest has schemaVersion %d, not 2", m.SchemaVersion)
	}
	if m.Config.MediaType != "" && m.Config.MediaType != helmConfigType {
		return fetched{}, fmt.Errorf("%s is not a Helm chart (config media type %q)", ref, m.Config.MediaType)
	}
	var layer *ociDescriptor
	for i := range m.Layers {
		if m.Layers[i].MediaType == helmChartLayer {
			if layer != nil {
				return fetched{}, fmt.Errorf("the chart manifest has more than one chart layer")
			}
			layer = &m.Layers[i]
		}
	}
	if layer == nil {
		return fetched{}, fmt.Errorf("%s is not a Helm chart (no layer of media type %s)", ref, helmChartLayer)
	}
	if !digestRE.MatchString(layer.Digest) {
		return fetched{}, fmt.Errorf("the chart layer's digest %q is not a sha256 digest", layer.Digest)
	}
	if ref.Digest != "" && ref.Digest != manifestDigest && ref.Digest != layer.Digest {
		return fetched{}, fmt.Errorf("%w: the registry serves manifest %s with chart layer %s, the pin is %s", ErrDigestMismatch, manifestDigest, layer.Digest, ref.Digest)
	}
	if layer.Size > f.maxArchive() {
		return fetched{}, fmt.Errorf("the chart archive is too large (%d bytes, at most %d)", layer.Size, f.maxArchive())
	}

	bURL := s.url("/v2/" + s.repo + "/blobs/" + layer.Digest)
	archive, _, err := s.get(ctx, "the chart archive", bURL, nil, f.maxArchive())
	if err != nil {
		return fetched{}, err
	}
	got := sha256Digest(archive)
	if err := checkDigest("the downloaded chart layer", got, layer.Digest); err != nil {
		return fetched{}, fmt.Errorf("%w (the manifest's layer digest)", err)
	}
	if layer.Size > 0 && int64(len(archive)) != layer.Size {
		return fetched{}, fmt.Errorf("the chart layer is %d bytes, the manifest says %d", len(archive), layer.Size)
	}
	if err := looksLikeGzip(archive); err != nil {
		return fetched{}, err
	}
	return fetched{archive: archive, digest: got, manifestDigest: manifestDigest}, nil
}

func (s *ociSession) url(path string) *url.URL {
	return &url.URL{Scheme: s.scheme, Host: s.host, Path: path}
}

// get does a GET on the registry, answering one 401 challenge.
func (s *ociSession) get(ctx context.Context, what string, u *url.URL, hdr http.Header, limit int64) ([]byte, *http.Response, error) {
	h := http.Header{}
	for k, v := range hdr {
		h[k] = v
	}
	if s.auth != "" {
		h.Set("Authorization", s.auth)
	} else if s.hasCrd && s.scheme == "https" {
		// registries that take basic auth directly; over plain http only
		// after a challenge asks for it
		h.Set("Authorization", basicAuth(s.cred))
	}
	body, resp, err := s.f.get(ctx, s.c, what, u, h, limit)
	if resp == nil || resp.StatusCode != http.StatusUnauthorized || resp.Request.URL.Host != s.host {
		return body, resp, err
	}
	challenge := resp.Header.Get("WWW-Authenticate")
	scheme, params := parseChallenge(challenge)
	switch strings.ToLower(scheme) {
	case "basic":
		if !s.hasCrd {
			return nil, resp, fmt.Errorf("unauthorized: %s needs credentials for %s and none are configured", what, s.host)
		}
		if h.Get("Authorization") != "" && s.auth == "" && s.scheme == "https" {
			return body, resp, err // the credential was sent and refused
		}
		s.auth = basicAuth(s.cred)
	case "bearer":
		tok, terr := s.token(ctx, params)
		if terr != nil {
			return nil, resp, terr
		}
		s.auth = "Bearer " + tok
	default:
		return body, resp, err
	}
	h.Set("Authorization", s.auth)
	return s.f.get(ctx, s.c, what, u, h, limit)
}

// token gets a bearer token from the challenge's realm. The credential goes
// to the realm only if the realm is on the registry's own host; otherwise
// the token is asked anonymously (a registry could otherwise name a realm
// that trades our credential for a token it then receives).
func (s *ociSession) token(ctx context.Context, params map[string]string) (string, error) {
	realm := params["realm"]
	ru, err := url.Parse(realm)
	if err != nil || realm == "" || (ru.Scheme != "https" && ru.Scheme != "http") || ru.Host == "" || ru.User != nil {
		return "", fmt.Errorf("the registry %s asked for a token from an unusable realm", s.host)
	}
	q := ru.Query()
	if svc := params["service"]; svc != "" {
		q.Set("service", svc)
	}
	scope := params["scope"]
	if scope == "" {
		scope = "repository:" + s.repo + ":" + defaultPullScope
	}
	q.Set("scope", scope)
	ru.RawQuery = q.Encode()
	h := http.Header{}
	sameHost := ru.Host == s.host && (ru.Scheme == "https" || s.scheme == "http")
	if s.hasCrd && sameHost {
		h.Set("Authorization", basicAuth(s.cred))
	}
	body, _, err := s.f.get(ctx, s.c, "a registry token", ru, h, maxToken)
	if err != nil {
		if s.hasCrd && !sameHost {
			return "", fmt.Errorf("%w (the token realm %s is not on the registry's host %s, so the credential was not sent to it)", err, ru.Host, s.host)
		}
		return "", err
	}
	var tr struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tr); err != nil {
		return "", fmt.Errorf("the token answer from %s is not valid JSON", ru.Host)
	}
	tok := tr.Token
	if tok == "" {
		tok = tr.AccessToken
	}
	if tok == "" || strings.ContainsAny(tok, "\r\n") {
		return "", fmt.Errorf("the token answer from %s holds no usable token", ru.Host)
	}
	return tok, nil
}

// parseChallenge reads `Bearer realm="...",service="...",scope="..."`.
func parseChallenge(h string) (string, map[string]string) {
	h = strings.TrimSpace(h)
	scheme, rest, _ := strings.Cut(h, " ")
	params := map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; {
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			break
		}
		key := strings.ToLower(strings.TrimSpace(rest[:eq]))
		rest = strings.TrimSpace(rest[eq+1:])
		var val string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(rest); i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
					b.WriteByte(rest[i])
					continue
				}
				if rest[i] == '"' {
					break
				}
				b.WriteByte(rest[i])
			}
			val = b.String()
			if i < len(rest) {
				i++
			}
			rest = rest[i:]
		} else {
			end := strings.IndexByte(rest, ',')
			if end < 0 {
				end = len(rest)
			}
			val = strings.TrimSpace(rest[:end])
			rest = rest[end:]
		}
		params[key] = val
		rest = strings.TrimLeft(rest, " ,")
	}
	return scheme, params
}
