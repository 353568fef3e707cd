package charts

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/propagit/propagit/internal/api/chartv1alpha1"
	"github.com/propagit/propagit/internal/helm/fetch"
)

// fetchTimeout bounds one remote chart's fetch.
const fetchTimeout = time.Minute

// FetchWith fetches remote charts with f: the controller's (online, with
// the registries' credentials) or a pull-request job's (offline, reading
// the cache only).
func FetchWith(f *fetch.Fetcher) Remote {
	return func(ctx context.Context, spec *chartv1alpha1.Spec) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
		defer cancel()
		ref := fetch.Ref{RepoURL: spec.RepoURL, Chart: spec.Chart, Version: spec.Version, Digest: spec.Digest}
		data, _, err := f.Fetch(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", ref, err)
		}
		return data, nil
	}
}

// Credentials reads the registries' credentials from a .dockerconfigjson
// file (a Secret mounted outside Git); "" has none.
func Credentials(file string) (fetch.Credentials, error) {
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("chart credentials: %w", err)
	}
	creds, err := fetch.ParseDockerConfig(data)
	if err != nil {
		return nil, fmt.Errorf("chart credentials %s: %w", file, err)
	}
	return creds, nil
}
