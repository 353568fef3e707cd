package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

var (
	// ErrNotCached: Offline and the cache does not hold the chart.
	ErrNotCached = errors.New("chart not cached")
	// ErrDigestMismatch: the bytes are not those the index, the manifest,
	// the Ref's pin or the cache's own name say.
	ErrDigestMismatch = errors.New("digest mismatch")
)

const (
	defaultMaxArchive = 10 << 20
	defaultMaxIndex   = 16 << 20
	maxManifest       = 4 << 20
	maxToken          = 1 << 20
)

// Fetcher fetches remote charts into a content-addressed cache:
// <CacheDir>/sha256/<hex>.tgz, and <CacheDir>/refs/<sha256 of the ref>.json
// recording which archive (and, for OCI, which manifest) a Ref resolved to.
// The zero value fetches without a cache.
type Fetcher struct {
	// CacheDir is the cache folder; empty: no cache (and Offline always
	// fails).
	CacheDir string
	// Credentials go ONLY to the exact host[:port] keyed: never with a
	// redirect to another host, nor to a download URL (index.yaml's, or a
	// registry's blob redirect) on another host, nor to a token realm on
	// another host.
	Credentials Credentials
	// Offline: the cache only, never the network.
	Offline bool
	// HTTPClient: nil means a client with connect, TLS, header and overall
	// timeouts. Its CheckRedirect is wrapped to strip credentials.
	HTTPClient *http.Client
	// MaxArchive bounds a chart archive (streaming); default 10 MiB.
	MaxArchive int64
	// MaxIndex bounds a repository's index.yaml; default 16 MiB.
	MaxIndex int64
	// PlainHTTP: OCI registries over http (tests, local registries).
	PlainHTTP bool
}

func (f *Fetcher) maxArchive() int64 {
	if f.MaxArchive > 0 {
		return f.MaxArchive
	}
	return defaultMaxArchive
}

func (f *Fetcher) maxIndex() int64 {
	if f.MaxIndex > 0 {
		return f.MaxIndex
	}
	return defaultMaxIndex
}

// Fetch returns the chart archive (.tgz) Ref names and its digest
// ("sha256:<hex>" of the archive bytes): from the cache when it holds the
// Ref (re-verified), otherwise (unless Offline) from the network, verified,
// then cached atomically.
func (f *Fetcher) Fetch(ctx context.Context, ref Ref) (archive []byte, digest string, err error) {
	if err := ref.Validate(); err != nil {
		return nil, "", fmt.Errorf("helm chart: %w", err)
	}
	data, dg, err := f.fromCache(ref)
	if err != nil {
		return nil, "", err
	}
	if data != nil {
		return data, dg, nil
	}
	if f.Offline {
		return nil, "", fmt.Errorf("%w: chart %s is not available offline: the controller's chart cache (or a --chart-cache folder) must hold it", ErrNotCached, ref)
	}
	var res fetched
	if ref.IsOCI() {
		res, err = f.fetchOCI(ctx, ref)
	} else {
		res, err = f.fetchRepo(ctx, ref)
	}
	if err != nil {
		return nil, "", fmt.Errorf("chart %s: %w", ref, err)
	}
	if err := f.store(ref, res); err != nil {
		return nil, "", fmt.Errorf("chart %s: caching: %w", ref, err)
	}
	return res.archive, res.digest, nil
}

type fetched struct {
	archive        []byte
	digest         string // sha256:<hex> of archive
	manifestDigest string // OCI only
}

// --- cache ---

type refRecord struct {
	Ref            string `json:"ref"`
	Digest         string `json:"digest"`
	ManifestDigest string `json:"manifestDigest,omitempty"`
}

func refKey(ref Ref) string {
	k := strings.TrimRight(ref.RepoURL, "/") + "\x00" + ref.Chart + "\x00" + ref.Version
	s := sha256.Sum256([]byte(k))
	return hex.EncodeToString(s[:])
}

func (f *Fetcher) blobPath(digest string) string {
	return filepath.Join(f.CacheDir, "sha256", strings.TrimPrefix(digest, "sha256:")+".tgz")
}

func (f *Fetcher) refPath(ref Ref) string {
	return filepath.Join(f.CacheDir, "refs", refKey(ref)+".json")
}

// fromCache returns (nil, "", nil) on a miss.
func (f *Fetcher) fromCache(ref Ref) ([]byte, string, error) {
	if f.CacheDir == "" {
		return nil, "", nil
	}
	var rec refRecord
	raw, err := readBounded(f.refPath(ref), 64<<10)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, "", fmt.Errorf("chart %s: reading the cache: %w", ref, err)
	default:
		if err := json.Unmarshal(raw, &rec); err != nil || !digestRE.MatchString(rec.Digest) ||
			(rec.ManifestDigest != "" && !digestRE.MatchString(rec.ManifestDigest)) || rec.Ref != ref.String() {
			return nil, "", fmt.Errorf("chart %s: the cache record %s is damaged; remove it", ref, f.refPath(ref))
		}
		// a pin the record does not match (the pin changed) is a miss:
		// fetched again and verified against the new pin
		if ref.Digest == "" || ref.Digest == rec.Digest || ref.Digest == rec.ManifestDigest {
			data, err := f.readBlob(ref, rec.Digest)
			if err != nil || data != nil {
				return data, rec.Digest, err
			}
		}
	}
	// no record (or its archive is gone): a pinned archive digest may be
	// in the cache on its own
	if ref.Digest != "" {
		data, err := f.readBlob(ref, ref.Digest)
		if err != nil || data != nil {
			return data, ref.Digest, err
		}
	}
	return nil, "", nil
}

// readBlob reads and re-verifies one cached archive; (nil, nil) if absent.
func (f *Fetcher) readBlob(ref Ref, digest string) ([]byte, error) {
	p := f.blobPath(digest)
	data, err := readBounded(p, f.maxArchive())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("chart %s: reading the cache: %w", ref, err)
	}
	if got := sha256Digest(data); got != digest {
		return nil, fmt.Errorf("chart %s: %w: the cached archive %s was altered (its content is %s); remove it", ref, ErrDigestMismatch, p, got)
	}
	return data, nil
}

func readBounded(path string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is too large (over %d bytes)", path, limit)
	}
	return data, nil
}

func (f *Fetcher) store(ref Ref, res fetched) error {
	if f.CacheDir == "" {
		return nil
	}
	if err := writeAtomic(f.blobPath(res.digest), res.archive); err != nil {
		return err
	}
	rec, err := json.Marshal(refRecord{Ref: ref.String(), Digest: res.digest, ManifestDigest: res.manifestDigest})
	if err != nil {
		return err
	}
	return writeAtomic(f.refPath(ref), rec)
}

func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(name, 0o644)
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

func sha256Digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// --- HTTP ---

func (f *Fetcher) client() *http.Client {
	var c http.Client
	if f.HTTPClient != nil {
		c = *f.HTTPClient
	} else {
		c = http.Client{
			Timeout: 5 * time.Minute,
			Transport: &http.Transport{
				Proxy:                 http.ProxyFromEnvironment,
				DialContext:           (&net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
				TLSHandshakeTimeout:   15 * time.Second,
				ResponseHeaderTimeout: 30 * time.Second,
				IdleConnTimeout:       90 * time.Second,
				MaxIdleConns:          10,
				ForceAttemptHTTP2:     true,
			},
		}
	}
	inner := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("too many redirects")
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect to a %q URL refused", req.URL.Scheme)
		}
		// a credential never follows a redirect to another host, nor a
		// downgrade from https to http
		first := via[0].URL
		strip := req.URL.Host != first.Host || (first.Scheme == "https" && req.URL.Scheme != "https")
		for _, v := range via[1:] {
			if v.URL.Host != first.Host {
				strip = true
			}
		}
		if strip {
			req.Header.Del("Authorization")
			req.Header.Del("Proxy-Authorization")
			req.Header.Del("Cookie")
		}
		if inner != nil {
			return inner(req, via)
		}
		return nil
	}
	return &c
}

// httpError is an HTTP status in plain words.
func httpError(what string, u *url.URL, status int) error {
	switch {
	case status == http.StatusNotFound:
		return fmt.Errorf("%s not found (%s: HTTP 404)", what, redact(u))
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("unauthorized: %s (%s: HTTP %d); check the credentials for %s", what, redact(u), status, u.Host)
	case status == http.StatusTooManyRequests:
		return fmt.Errorf("%s: rate limited (%s: HTTP 429)", what, redact(u))
	default:
		return fmt.Errorf("%s: %s answered HTTP %d", what, redact(u), status)
	}
}

// netError says a transport error in plain words.
func netError(what string, err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%s: timeout: %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// redact drops any userinfo and query (a signed URL's token) from a URL
// for a message.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.Fragment = ""
	return c.String()
}

// get performs one bounded GET. auth, when set, is the Authorization header
// for u's host only. It returns the body (at most limit bytes), the
// response (body closed) or an error.
func (f *Fetcher) get(ctx context.Context, c *http.Client, what string, u *url.URL, hdr http.Header, limit int64) ([]byte, *http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// url.Error quotes the URL; say it without a query
			if pu, perr := url.Parse(ue.URL); perr == nil {
				ue.URL = redact(pu)
			}
		}
		return nil, nil, netError(what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, resp, httpError(what, resp.Request.URL, resp.StatusCode)
	}
	if resp.ContentLength > limit {
		return nil, resp, fmt.Errorf("%s is too large (%d bytes, at most %d)", what, resp.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, resp, netError("reading "+what, err)
	}
	if int64(len(body)) > limit {
		return nil, resp, fmt.Errorf("%s is too large (over %d bytes)", what, limit)
	}
	return body, resp, nil
}

func basicAuth(c Credential) string {
	req := http.Request{Header: http.Header{}}
	req.SetBasicAuth(c.Username, c.Password)
	return req.Header.Get("Authorization")
}

// checkDigest compares an archive's digest with an expected one.
func checkDigest(what, got, want string) error {
	if want != "" && got != want {
		return fmt.Errorf("%w: %s is %s, expected %s", ErrDigestMismatch, what, got, want)
	}
	return nil
}
