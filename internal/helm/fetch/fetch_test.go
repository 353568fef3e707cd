package fetch

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

const (
	testUser = "robot"
	testPass = "s3cr3t-Pa55w0rd"
)

// chartTgz builds a tiny chart archive: <name>/Chart.yaml, <name>/templates/cm.yaml.
func chartTgz(t *testing.T, name, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	files := []struct{ path, body string }{
		{name + "/Chart.yaml", fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\n", name, version)},
		{name + "/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n"},
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.path, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func hexOf(d string) string { return strings.TrimPrefix(d, "sha256:") }

// noSecret fails if an error shows the password (or its basic-auth form).
func noSecret(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	b64 := base64.StdEncoding.EncodeToString([]byte(testUser + ":" + testPass))
	if s := err.Error(); strings.Contains(s, testPass) || strings.Contains(s, b64) {
		t.Fatalf("error shows the credential: %s", s)
	}
}

// sink is another host: it records whether any request carried credentials.
type sink struct {
	*httptest.Server
	hits, authHits atomic.Int32
}

func newSink(t *testing.T, body []byte) *sink {
	s := &sink{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
			s.authHits.Add(1)
		}
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

// chartRepo is a chart repository requiring basic auth.
type chartRepo struct {
	*httptest.Server
	mu       sync.Mutex
	index    string
	archive  []byte
	redirect string // if set, the archive is a redirect there
	hits     atomic.Int32
}

func newChartRepo(t *testing.T) *chartRepo {
	r := &chartRepo{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		if u, p, ok := req.BasicAuth(); !ok || u != testUser || p != testPass {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		switch req.URL.Path {
		case "/charts/index.yaml":
			io.WriteString(w, r.index)
		case "/charts/web-1.2.3.tgz":
			if r.redirect != "" {
				http.Redirect(w, req, r.redirect, http.StatusFound)
				return
			}
			w.Write(r.archive)
		default:
			http.NotFound(w, req)
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *chartRepo) set(index string, archive []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.index, r.archive = index, archive
}

func indexYAML(url, digest string) string {
	s := "apiVersion: v1\nentries:\n  web:\n  - apiVersion: v2\n    name: web\n    version: 1.2.3\n    urls:\n    - " + url + "\n"
	if digest != "" {
		s += "    digest: " + digest + "\n"
	}
	return s + "  other:\n  - name: other\n    version: 0.1.0\n    urls: [other-0.1.0.tgz]\n"
}

func (r *chartRepo) fetcher(t *testing.T) *Fetcher {
	return &Fetcher{
		CacheDir:    t.TempDir(),
		Credentials: Credentials{r.Listener.Addr().String(): {Username: testUser, Password: testPass}},
	}
}

func (r *chartRepo) ref() Ref {
	return Ref{RepoURL: r.URL + "/charts", Chart: "web", Version: "1.2.3"}
}

func cachedFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestRepoBasicAuth(t *testing.T) {
	tgz := chartTgz(t, "web", "1.2.3")
	r := newChartRepo(t)
	r.set(indexYAML("web-1.2.3.tgz", hexOf(sha256Digest(tgz))), tgz)
	ctx := context.Background()

	f := r.fetcher(t)
	got, dg, err := f.Fetch(ctx, r.ref())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, tgz) || dg != sha256Digest(tgz) {
		t.Fatalf("got %d bytes %s", len(got), dg)
	}
	if _, err := os.Stat(filepath.Join(f.CacheDir, "sha256", hexOf(dg)+".tgz")); err != nil {
		t.Fatalf("not cached: %v", err)
	}

	anon := &Fetcher{CacheDir: t.TempDir()}
	_, _, err = anon.Fetch(ctx, r.ref())
	if err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("want unauthorized, got %v", err)
	}

	wrong := r.fetcher(t)
	wrong.Credentials = Credentials{r.Listener.Addr().String(): {Username: testUser, Password: "nope" + testPass}}
	_, _, err = wrong.Fetch(ctx, r.ref())
	if err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("want unauthorized, got %v", err)
	}
	noSecret(t, err)

	// a version or chart the index does not have
	for _, ref := range []Ref{{RepoURL: r.URL + "/charts", Chart: "web", Version: "1.2.4"}, {RepoURL: r.URL + "/charts", Chart: "nope", Version: "1.2.3"}} {
		_, _, err := r.fetcher(t).Fetch(ctx, ref)
		if err == nil || !strings.Contains(err.Error(), "not found") {
			t.Fatalf("%v: want not found, got %v", ref, err)
		}
	}
}

func TestRepoDownloadURLOnAnotherHostGetsNoCredential(t *testing.T) {
	tgz := chartTgz(t, "web", "1.2.3")
	other := newSink(t, tgz)
	r := newChartRepo(t)
	// same hostname (127.0.0.1), another port: another host
	r.set(indexYAML(other.URL+"/web-1.2.3.tgz", "sha256:"+hexOf(sha256Digest(tgz))), tgz)
	got, _, err := r.fetcher(t).Fetch(context.Background(), r.ref())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, tgz) || other.hits.Load() != 1 {
		t.Fatalf("hits %d", other.hits.Load())
	}
	if other.authHits.Load() != 0 {
		t.Fatal("the download host received the repository's credential")
	}
}

func TestRepoRedirectToAnotherHostGetsNoCredential(t *testing.T) {
	tgz := chartTgz(t, "web", "1.2.3")
	other := newSink(t, tgz)
	r := newChartRepo(t)
	r.set(indexYAML("web-1.2.3.tgz", hexOf(sha256Digest(tgz))), tgz)
	r.mu.Lock()
	r.redirect = other.URL + "/elsewhere.tgz"
	r.mu.Unlock()
	got, _, err := r.fetcher(t).Fetch(context.Background(), r.ref())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, tgz) || other.hits.Load() != 1 {
		t.Fatalf("hits %d", other.hits.Load())
	}
	if other.authHits.Load() != 0 {
		t.Fatal("the redirect target received the repository's credential")
	}
}

func TestRepoTamperedArchive(t *testing.T) {
	tgz := chartTgz(t, "web", "1.2.3")
	evil := chartTgz(t, "web", "6.6.6")
	r := newChartRepo(t)
	r.set(indexYAML("web-1.2.3.tgz", hexOf(sha256Digest(tgz))), evil)
	f := r.fetcher(t)
	_, _, err := f.Fetch(context.Background(), r.ref())
	if !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("want ErrDigestMismatch, got %v", err)
	}
	if c := cachedFiles(t, f.CacheDir); len(c) != 0 {
		t.Fatalf("cached after a mismatch: %v", c)
	}
}

func TestRepoPinnedDigestMismatch(t *testing.T) {
	tgz := chartTgz(t, "web", "1.2.3")
	r := newChartRepo(t)
	r.set(indexYAML("web-1.2.3.tgz", ""), tgz) // no index digest: the pin is the only check
	f := r.fetcher(t)
	ref := r.ref()
	ref.Digest = "sha256:" + strings.Repeat("ab", 32)
	_, _, err := f.Fetch(context.Background(), ref)
	if !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("want ErrDigestMismatch, got %v", err)
	}
	if c := cachedFiles(t, f.CacheDir); len(c) != 0 {
		t.Fatalf("cached after a mismatch: %v", c)
	}
	ref.Digest = sha256Digest(tgz)
	if _, _, err := f.Fetch(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
}

func TestRepoTooLarge(t *testing.T) {
	tgz := chartTgz(t, "web", "1.2.3")
	r := newChartRepo(t)
	r.set(indexYAML("web-1.2.3.tgz", ""), tgz)
	f := r.fetcher(t)
	f.MaxArchive = int64(len(tgz) - 1)
	_, _, err := f.Fetch(context.Background(), r.ref())
	if err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("want too large, got %v", err)
	}

	// an index over MaxIndex, streamed without a Content-Length
	big := newChartRepo(t)
	big.set(indexYAML("web-1.2.3.tgz", "")+"# "+strings.Repeat("x", 4096)+"\n", tgz)
	f = big.fetcher(t)
	f.MaxIndex = 1024
	_, _, err = f.Fetch(context.Background(), big.ref())
	if err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("want too large, got %v", err)
	}
	if c := cachedFiles(t, f.CacheDir); len(c) != 0 {
		t.Fatalf("cached: %v", c)
	}
}

func TestRepoHostileIndex(t *testing.T) {
	tgz := chartTgz(t, "web", "1.2.3")
	for name, index := range map[string]string{
		"file URL":   indexYAML("file:///etc/passwd", ""),
		"bad digest": indexYAML("web-1.2.3.tgz", "md5:abc"),
		"not yaml":   "{{{{",
		"no urls":    "apiVersion: v1\nentries:\n  web:\n  - name: web\n    version: 1.2.3\n",
	} {
		r := newChartRepo(t)
		r.set(index, tgz)
		_, _, err := r.fetcher(t).Fetch(context.Background(), r.ref())
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCacheTamperedAndOffline(t *testing.T) {
	tgz := chartTgz(t, "web", "1.2.3")
	r := newChartRepo(t)
	r.set(indexYAML("web-1.2.3.tgz", hexOf(sha256Digest(tgz))), tgz)
	ctx := context.Background()

	// Offline with an empty cache: ErrNotCached, and no request at all
	f := r.fetcher(t)
	f.Offline = true
	_, _, err := f.Fetch(ctx, r.ref())
	if !errors.Is(err, ErrNotCached) || !strings.Contains(err.Error(), "not available offline") {
		t.Fatalf("want ErrNotCached, got %v", err)
	}
	if r.hits.Load() != 0 {
		t.Fatalf("offline fetch reached the server (%d requests)", r.hits.Load())
	}

	// online, then offline: the same bytes, no request
	f.Offline = false
	want, dg, err := f.Fetch(ctx, r.ref())
	if err != nil {
		t.Fatal(err)
	}
	hits := r.hits.Load()
	f.Offline = true
	got, dg2, err := f.Fetch(ctx, r.ref())
	if err != nil || !bytes.Equal(got, want) || dg2 != dg {
		t.Fatalf("offline: %v", err)
	}
	// a pinned ref reads the cache too
	pinned := r.ref()
	pinned.Digest = dg
	if _, _, err := f.Fetch(ctx, pinned); err != nil {
		t.Fatal(err)
	}
	// a pin the cache does not hold is a miss offline
	pinned.Digest = "sha256:" + strings.Repeat("cd", 32)
	if _, _, err := f.Fetch(ctx, pinned); !errors.Is(err, ErrNotCached) {
		t.Fatalf("want ErrNotCached, got %v", err)
	}
	if r.hits.Load() != hits {
		t.Fatal("offline fetch reached the server")
	}

	// a tampered cache file is an error, offline and online
	blob := filepath.Join(f.CacheDir, "sha256", hexOf(dg)+".tgz")
	if err := os.WriteFile(blob, chartTgz(t, "web", "6.6.6"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, offline := range []bool{true, false} {
		f.Offline = offline
		_, _, err = f.Fetch(ctx, r.ref())
		if !errors.Is(err, ErrDigestMismatch) || !strings.Contains(err.Error(), "altered") {
			t.Fatalf("offline=%v: want a tampered-cache error, got %v", offline, err)
		}
	}

	// a damaged record is an error
	recs, _ := filepath.Glob(filepath.Join(f.CacheDir, "refs", "*.json"))
	if len(recs) != 1 {
		t.Fatalf("records %v", recs)
	}
	os.WriteFile(recs[0], []byte(`{"ref":"x","digest":"sha256:`+strings.Repeat("0", 64)+`"}`), 0o644)
	if _, _, err := f.Fetch(ctx, r.ref()); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("want damaged, got %v", err)
	}

	// no cache folder: offline is never satisfied
	if _, _, err := (&Fetcher{Offline: true}).Fetch(ctx, r.ref()); !errors.Is(err, ErrNotCached) {
		t.Fatalf("want ErrNotCached, got %v", err)
	}
}

func TestValidate(t *testing.T) {
	ok := []Ref{
		{RepoURL: "https://charts.example.com", Chart: "web", Version: "1.2.3"},
		{RepoURL: "http://10.0.0.1:8080/charts/", Chart: "my_chart.x", Version: "1.2.3-rc.1+build.5"},
		{RepoURL: "oci://ghcr.io/org/charts", Chart: "web", Version: "v1.14.4", Digest: "sha256:" + strings.Repeat("a", 64)},
		{RepoURL: "oci://localhost:5000", Chart: "web", Version: "0.0.1"},
	}
	for _, r := range ok {
		if err := r.Validate(); err != nil {
			t.Errorf("%v: %v", r, err)
		}
	}
	base := Ref{RepoURL: "https://charts.example.com", Chart: "web", Version: "1.2.3"}
	bad := map[string]func(*Ref){
		"no repo":        func(r *Ref) { r.RepoURL = "" },
		"ftp":            func(r *Ref) { r.RepoURL = "ftp://x/y" },
		"file":           func(r *Ref) { r.RepoURL = "file:///etc" },
		"no host":        func(r *Ref) { r.RepoURL = "https:///x" },
		"userinfo":       func(r *Ref) { r.RepoURL = "https://robot:" + testPass + "@x/y" },
		"query":          func(r *Ref) { r.RepoURL = "https://x/y?a=b" },
		"dotdot repo":    func(r *Ref) { r.RepoURL = "https://x/a/../b" },
		"oci upper":      func(r *Ref) { r.RepoURL = "oci://x/Org" },
		"slash chart":    func(r *Ref) { r.Chart = "a/b" },
		"dotdot chart":   func(r *Ref) { r.Chart = ".." },
		"dotdot in":      func(r *Ref) { r.Chart = "a..b" },
		"empty chart":    func(r *Ref) { r.Chart = "" },
		"space chart":    func(r *Ref) { r.Chart = "a b" },
		"no version":     func(r *Ref) { r.Version = "" },
		"range":          func(r *Ref) { r.Version = "^1.2.0" },
		"wildcard":       func(r *Ref) { r.Version = "1.2.x" },
		"two parts":      func(r *Ref) { r.Version = "1.2" },
		"leading zero":   func(r *Ref) { r.Version = "01.2.3" },
		"latest":         func(r *Ref) { r.Version = "latest" },
		"short digest":   func(r *Ref) { r.Digest = "sha256:abc" },
		"md5 digest":     func(r *Ref) { r.Digest = "md5:" + strings.Repeat("a", 32) },
		"upper digest":   func(r *Ref) { r.Digest = "sha256:" + strings.Repeat("A", 64) },
		"bare hex":       func(r *Ref) { r.Digest = strings.Repeat("a", 64) },
		"oci upper name": func(r *Ref) { r.RepoURL = "oci://x/y"; r.Chart = "Web" },
	}
	for name, mut := range bad {
		r := base
		mut(&r)
		err := r.Validate()
		if err == nil {
			t.Errorf("%s: %+v accepted", name, r)
		}
		noSecret(t, err)
		if _, _, ferr := (&Fetcher{}).Fetch(context.Background(), r); ferr == nil {
			t.Errorf("%s: Fetch accepted", name)
		}
	}
	if got := (Ref{RepoURL: "oci://host/path/", Chart: "c", Version: "1.2.3"}).String(); got != "oci://host/path/c:1.2.3" {
		t.Error(got)
	}
	if got := (Ref{RepoURL: "https://host/repo", Chart: "web", Version: "1.2.3"}).String(); got != "https://host/repo web 1.2.3" {
		t.Error(got)
	}
}

func TestParseDockerConfig(t *testing.T) {
	auth := base64.StdEncoding.EncodeToString([]byte(testUser + ":" + testPass))
	doc := `{"auths":{
		"https://Registry.Example.com:5000/v1/":{"auth":"` + auth + `"},
		"ghcr.io":{"username":"u","password":"p"},
		"quay.io/org":{"auth":"` + auth + `"},
		"empty.io":{}
	}}`
	cs, err := ParseDockerConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := Credentials{
		"registry.example.com:5000": {Username: testUser, Password: testPass},
		"ghcr.io":                   {Username: "u", Password: "p"},
		"quay.io":                   {Username: testUser, Password: testPass},
	}
	if fmt.Sprint(len(cs)) != "3" {
		t.Fatalf("%v", cs)
	}
	for k, v := range want {
		if cs[k] != v {
			t.Errorf("%s: %v", k, cs[k])
		}
	}
	if s := fmt.Sprintf("%v %+v %#v", cs, cs, cs["quay.io"]); strings.Contains(s, testPass) {
		t.Errorf("printing shows the password: %s", s)
	}
	for name, in := range map[string]string{
		"not json":   `{"auths":{"h":{"password":"` + testPass + `"`,
		"no auths":   `{"h":{"auth":"` + auth + `"}}`,
		"bad base64": `{"auths":{"h":{"auth":"` + testPass + `!!"}}}`,
		"no colon":   `{"auths":{"h":{"auth":"` + base64.StdEncoding.EncodeToString([]byte(testPass)) + `"}}}`,
		"wrong type": `{"auths":{"h":{"password":["` + testPass + `"]}}}`,
		"too large":  `{"auths":{}, "x":"` + strings.Repeat("a", 70<<10) + `"}`,
	} {
		_, err := ParseDockerConfig([]byte(in))
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		noSecret(t, err)
		if err != nil && strings.Contains(err.Error(), base64.StdEncoding.EncodeToString([]byte(testPass))) {
			t.Errorf("%s: error shows the secret: %v", name, err)
		}
	}
}

// --- OCI ---

type ociRegistry struct {
	*httptest.Server
	mu         sync.Mutex // guards realm, blobRedir, tamperBlob
	realm      string     // the token realm; default this server's /token
	hits       atomic.Int32
	tokenAuth  atomic.Int32 // token requests carrying the credential
	blobRedir  string       // if set, blob GETs redirect here
	tamperBlob []byte       // if set, blob GETs answer this
}

const testToken = "tok-123"

// newOCIRegistry is go-containerregistry's registry behind a bearer-token
// challenge: /token trades the basic credential for a token.
func newOCIRegistry(t *testing.T) *ociRegistry {
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	o := &ociRegistry{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.hits.Add(1)
		o.mu.Lock()
		realm, blobRedir, tamperBlob := o.realm, o.blobRedir, o.tamperBlob
		o.mu.Unlock()
		if r.URL.Path == "/token" {
			if u, p, ok := r.BasicAuth(); ok {
				if u != testUser || p != testPass {
					http.Error(w, "bad credentials", http.StatusUnauthorized)
					return
				}
				o.tokenAuth.Add(1)
				json.NewEncoder(w).Encode(map[string]string{"token": testToken})
				return
			}
			http.Error(w, "anonymous", http.StatusUnauthorized)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			if realm == "" {
				realm = o.URL + "/token"
			}
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm=%q,service="test",scope="repository:charts/web:pull"`, realm))
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			if blobRedir != "" {
				http.Redirect(w, r, blobRedir, http.StatusTemporaryRedirect)
				return
			}
			if tamperBlob != nil {
				w.Write(tamperBlob)
				return
			}
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *ociRegistry) set(fn func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fn()
}

// push uploads config, layer and manifest with plain registry API calls,
// authenticated with the token directly; it returns the manifest digest.
func (o *ociRegistry) push(t *testing.T, repo, tag string, tgz []byte) string {
	t.Helper()
	do := func(method, path, ctype string, body []byte) {
		req, _ := http.NewRequest(method, o.URL+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
	}
	config := []byte(`{"name":"web","version":"1.2.3","apiVersion":"v2"}`)
	for _, b := range [][]byte{config, tgz} {
		do(http.MethodPost, "/v2/"+repo+"/blobs/uploads/?digest="+sha256Digest(b), "application/octet-stream", b)
	}
	m, _ := json.Marshal(ociManifest{
		SchemaVersion: 2,
		MediaType:     ociManifestType,
		Config:        ociDescriptor{MediaType: helmConfigType, Digest: sha256Digest(config), Size: int64(len(config))},
		Layers:        []ociDescriptor{{MediaType: helmChartLayer, Digest: sha256Digest(tgz), Size: int64(len(tgz))}},
	})
	do(http.MethodPut, "/v2/"+repo+"/manifests/"+tag, ociManifestType, m)
	return sha256Digest(m)
}

func (o *ociRegistry) ref() Ref {
	return Ref{RepoURL: "oci://" + o.Listener.Addr().String() + "/charts", Chart: "web", Version: "1.2.3+build.1"}
}

func (o *ociRegistry) fetcher(t *testing.T) *Fetcher {
	return &Fetcher{
		CacheDir:    t.TempDir(),
		PlainHTTP:   true,
		Credentials: Credentials{o.Listener.Addr().String(): {Username: testUser, Password: testPass}},
	}
}

func TestOCI(t *testing.T) {
	tgz := chartTgz(t, "web", "1.2.3+build.1")
	o := newOCIRegistry(t)
	manifestDigest := o.push(t, "charts/web", "1.2.3_build.1", tgz)
	ctx := context.Background()

	f := o.fetcher(t)
	got, dg, err := f.Fetch(ctx, o.ref())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, tgz) || dg != sha256Digest(tgz) {
		t.Fatalf("got %d bytes, %s", len(got), dg)
	}
	if o.tokenAuth.Load() == 0 {
		t.Fatal("no token exchange")
	}

	// the pin may be the layer's digest or the manifest's, online and offline
	for _, pin := range []string{dg, manifestDigest} {
		ref := o.ref()
		ref.Digest = pin
		g := o.fetcher(t)
		if _, _, err := g.Fetch(ctx, ref); err != nil {
			t.Fatalf("pin %s: %v", pin, err)
		}
		g.Offline = true
		if b, _, err := g.Fetch(ctx, ref); err != nil || !bytes.Equal(b, tgz) {
			t.Fatalf("offline pin %s: %v", pin, err)
		}
	}
	ref := o.ref()
	ref.Digest = "sha256:" + strings.Repeat("ef", 32)
	g := o.fetcher(t)
	if _, _, err := g.Fetch(ctx, ref); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("want ErrDigestMismatch, got %v", err)
	}
	if c := cachedFiles(t, g.CacheDir); len(c) != 0 {
		t.Fatalf("cached: %v", c)
	}

	// no credential, a wrong one: unauthorized, never showing the password
	_, _, err = (&Fetcher{PlainHTTP: true}).Fetch(ctx, o.ref())
	if err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("want unauthorized, got %v", err)
	}
	bad := o.fetcher(t)
	bad.Credentials = Credentials{o.Listener.Addr().String(): {Username: testUser, Password: testPass + "x"}}
	_, _, err = bad.Fetch(ctx, o.ref())
	if err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("want unauthorized, got %v", err)
	}
	noSecret(t, err)

	// a version not pushed
	nf := o.ref()
	nf.Version = "9.9.9"
	if _, _, err := o.fetcher(t).Fetch(ctx, nf); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("want not found, got %v", err)
	}
}

func TestOCITamperedLayer(t *testing.T) {
	tgz := chartTgz(t, "web", "1.2.3+build.1")
	o := newOCIRegistry(t)
	o.push(t, "charts/web", "1.2.3_build.1", tgz)
	evil := chartTgz(t, "web", "6.6.6")
	o.set(func() { o.tamperBlob = evil })
	f := o.fetcher(t)
	f.MaxArchive = 1 << 20
	_, _, err := f.Fetch(context.Background(), o.ref())
	if !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("want ErrDigestMismatch, got %v", err)
	}
	if c := cachedFiles(t, f.CacheDir); len(c) != 0 {
		t.Fatalf("cached: %v", c)
	}
	// a layer over MaxArchive is refused before the download
	o.set(func() { o.tamperBlob = nil })
	f.MaxArchive = int64(len(tgz) - 1)
	if _, _, err := f.Fetch(context.Background(), o.ref()); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("want too large, got %v", err)
	}
}

func TestOCIBlobRedirectToAnotherHostGetsNoCredential(t *testing.T) {
	tgz := chartTgz(t, "web", "1.2.3+build.1")
	other := newSink(t, tgz)
	o := newOCIRegistry(t)
	o.push(t, "charts/web", "1.2.3_build.1", tgz)
	o.set(func() { o.blobRedir = other.URL + "/blob" })
	got, _, err := o.fetcher(t).Fetch(context.Background(), o.ref())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, tgz) || other.hits.Load() != 1 {
		t.Fatalf("hits %d", other.hits.Load())
	}
	if other.authHits.Load() != 0 {
		t.Fatal("the blob redirect target received the registry's token or credential")
	}
}

func TestOCITokenRealmOnAnotherHostGetsNoCredential(t *testing.T) {
	tgz := chartTgz(t, "web", "1.2.3+build.1")
	other := newSink(t, []byte(`{"token":"nope"}`))
	o := newOCIRegistry(t)
	o.push(t, "charts/web", "1.2.3_build.1", tgz)
	o.set(func() { o.realm = other.URL + "/token" })
	_, _, err := o.fetcher(t).Fetch(context.Background(), o.ref())
	if err == nil {
		t.Fatal("fetched with a foreign realm's token")
	}
	noSecret(t, err)
	if other.hits.Load() == 0 || other.authHits.Load() != 0 {
		t.Fatalf("realm hits %d, with the credential %d", other.hits.Load(), other.authHits.Load())
	}
}

func TestParseChallenge(t *testing.T) {
	s, p := parseChallenge(`Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:a/b:pull,push"`)
	if s != "Bearer" || p["realm"] != "https://auth.example.com/token" || p["service"] != "registry.example.com" || p["scope"] != "repository:a/b:pull,push" {
		t.Fatalf("%s %v", s, p)
	}
	s, p = parseChallenge(`Basic realm=x`)
	if s != "Basic" || p["realm"] != "x" {
		t.Fatalf("%s %v", s, p)
	}
}

func TestOCIHostileManifests(t *testing.T) {
	tgz := chartTgz(t, "web", "1.2.3")
	layer := ociDescriptor{MediaType: helmChartLayer, Digest: sha256Digest(tgz), Size: int64(len(tgz))}
	cfg := ociDescriptor{MediaType: helmConfigType, Digest: sha256Digest([]byte("{}")), Size: 2}
	cases := map[string]ociManifest{
		"image index":     {SchemaVersion: 2, MediaType: ociIndexType},
		"no chart layer":  {SchemaVersion: 2, Config: cfg, Layers: []ociDescriptor{{MediaType: "application/vnd.oci.image.layer.v1.tar+gzip", Digest: layer.Digest}}},
		"two chart layer": {SchemaVersion: 2, Config: cfg, Layers: []ociDescriptor{layer, layer}},
		"bad digest":      {SchemaVersion: 2, Config: cfg, Layers: []ociDescriptor{{MediaType: helmChartLayer, Digest: "sha256:../../x"}}},
		"image config":    {SchemaVersion: 2, Config: ociDescriptor{MediaType: "application/vnd.oci.image.config.v1+json"}, Layers: []ociDescriptor{layer}},
		"schema 1":        {SchemaVersion: 1, Config: cfg, Layers: []ociDescriptor{layer}},
	}
	for name, m := range cases {
		body, _ := json.Marshal(m)
		var blobHits atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/manifests/") {
				w.Header().Set("Content-Type", ociManifestType)
				w.Write(body)
				return
			}
			blobHits.Add(1)
			w.Write(tgz)
		}))
		f := &Fetcher{PlainHTTP: true, CacheDir: t.TempDir()}
		_, _, err := f.Fetch(context.Background(), Ref{RepoURL: "oci://" + srv.Listener.Addr().String(), Chart: "web", Version: "1.2.3"})
		srv.Close()
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		if blobHits.Load() != 0 {
			t.Errorf("%s: downloaded a blob", name)
		}
	}
}

func TestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _, err := (&Fetcher{}).Fetch(ctx, Ref{RepoURL: srv.URL, Chart: "web", Version: "1.2.3"})
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("want timeout, got %v", err)
	}
}
