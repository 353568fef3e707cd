package fetch

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// indexFile is the part of a repository's index.yaml a fetch reads: the
// fields of Helm's pkg/repo/v1 IndexFile and ChartVersion by the same JSON
// names. (Helm's package itself is not imported: it brings Helm's getter
// and plugin runtime, WebAssembly included, into the controller.)
type indexFile struct {
	APIVersion string                   `json:"apiVersion"`
	Entries    map[string][]*indexEntry `json:"entries"`
}

type indexEntry struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	URLs    []string `json:"urls"`
	Digest  string   `json:"digest,omitempty"`
	Removed bool     `json:"removed,omitempty"`
}

var hexDigestRE = regexp.MustCompile(`^(?:sha256:)?([0-9a-fA-F]{64})$`)

// fetchRepo fetches from a chart repository: index.yaml, the entry for
// the exact version, its first URL (relative to repoURL). The repository
// host's credential goes to the repository host only; a download URL on
// another host gets none.
func (f *Fetcher) fetchRepo(ctx context.Context, ref Ref) (fetched, error) {
	base, err := url.Parse(strings.TrimRight(ref.RepoURL, "/") + "/")
	if err != nil {
		return fetched{}, err
	}
	c := f.client()
	cred, hasCred := f.Credentials.lookup(base.Host)
	authFor := func(u *url.URL) map[string][]string {
		if hasCred && u.Host == base.Host && (u.Scheme == base.Scheme || u.Scheme == "https") {
			return map[string][]string{"Authorization": {basicAuth(cred)}}
		}
		return nil
	}

	indexURL := base.ResolveReference(&url.URL{Path: "index.yaml"})
	body, _, err := f.get(ctx, c, "the repository index", indexURL, authFor(indexURL), f.maxIndex())
	if err != nil {
		return fetched{}, err
	}
	var idx indexFile
	if err := yaml.Unmarshal(body, &idx); err != nil {
		return fetched{}, fmt.Errorf("the repository index %s is not a valid index.yaml", redact(indexURL))
	}
	var entry *indexEntry
	for _, cv := range idx.Entries[ref.Chart] {
		if cv != nil && cv.Version == ref.Version && !cv.Removed {
			entry = cv
			break
		}
	}
	if entry == nil {
		if len(idx.Entries[ref.Chart]) == 0 {
			return fetched{}, fmt.Errorf("chart %q not found in the repository index %s", ref.Chart, redact(indexURL))
		}
		return fetched{}, fmt.Errorf("version %s of chart %q not found in the repository index %s", ref.Version, ref.Chart, redact(indexURL))
	}
	if len(entry.URLs) == 0 || entry.URLs[0] == "" {
		return fetched{}, fmt.Errorf("the repository index has no download URL for %s %s", ref.Chart, ref.Version)
	}
	rel, err := url.Parse(entry.URLs[0])
	if err != nil {
		return fetched{}, fmt.Errorf("the repository index's download URL for %s %s is not a URL", ref.Chart, ref.Version)
	}
	dl := base.ResolveReference(rel)
	if dl.Scheme != "http" && dl.Scheme != "https" {
		return fetched{}, fmt.Errorf("the repository index's download URL for %s %s has scheme %q (only http and https)", ref.Chart, ref.Version, dl.Scheme)
	}
	if dl.User != nil {
		return fetched{}, fmt.Errorf("the repository index's download URL for %s %s holds a user name; refused", ref.Chart, ref.Version)
	}
	var indexDigest string
	if entry.Digest != "" {
		m := hexDigestRE.FindStringSubmatch(entry.Digest)
		if m == nil {
			return fetched{}, fmt.Errorf("the repository index's digest for %s %s is not a sha256 digest", ref.Chart, ref.Version)
		}
		indexDigest = "sha256:" + strings.ToLower(m[1])
	}

	archive, _, err := f.get(ctx, c, "the chart archive", dl, authFor(dl), f.maxArchive())
	if err != nil {
		return fetched{}, err
	}
	got := sha256Digest(archive)
	if err := checkDigest("the downloaded archive", got, indexDigest); err != nil {
		return fetched{}, fmt.Errorf("%w (the repository index's digest)", err)
	}
	if err := checkDigest("the downloaded archive", got, ref.Digest); err != nil {
		return fetched{}, fmt.Errorf("%w (the pinned digest)", err)
	}
	if err := looksLikeGzip(archive); err != nil {
		return fetched{}, err
	}
	return fetched{archive: archive, digest: got}, nil
}

func looksLikeGzip(b []byte) error {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return fmt.Errorf("the downloaded chart archive is not a gzip file")
	}
	return nil
}
