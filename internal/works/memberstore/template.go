package memberstore

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/propagit/propagit/internal/gitrepo"
)

// ClusterPlaceholder, in a works repository URL, stands for the member's
// name: one works repository per member.
const ClusterPlaceholder = "{cluster}"

// IsRepoTemplate reports whether url names one works repository per member.
func IsRepoTemplate(url string) bool { return strings.Contains(url, ClusterPlaceholder) }

// RepoTemplate expands a works repository URL holding ClusterPlaceholder
// for one member. The placeholder may stand only in the repository's path:
// every expansion reaches the same scheme, user, host and port, so no
// cluster name can steer a member's Works, status or credentials elsewhere.
type RepoTemplate struct {
	tmpl string
	ep   *transport.Endpoint // the fixed part, from an expansion
}

// ParseRepoTemplate checks tmpl and returns its RepoTemplate.
func ParseRepoTemplate(tmpl string) (*RepoTemplate, error) {
	if !IsRepoTemplate(tmpl) {
		return nil, fmt.Errorf("invalid works repository template %s: no %s", gitrepo.RedactURL(tmpl), ClusterPlaceholder)
	}
	a, errA := transport.NewEndpoint(strings.ReplaceAll(tmpl, ClusterPlaceholder, "a"))
	b, errB := transport.NewEndpoint(strings.ReplaceAll(tmpl, ClusterPlaceholder, "b"))
	if errA != nil || errB != nil {
		return nil, fmt.Errorf("invalid works repository template %s: not a repository URL", gitrepo.RedactURL(tmpl))
	}
	if !sameServer(a, b) || a.Path == b.Path || strings.ContainsAny(tmpl, "?#") {
		return nil, fmt.Errorf("invalid works repository template %s: %s may stand in the repository path only, not in the scheme, user, host, port, query or fragment",
			gitrepo.RedactURL(tmpl), ClusterPlaceholder)
	}
	return &RepoTemplate{tmpl: tmpl, ep: a}, nil
}

// URL returns cluster's works repository. cluster must be a DNS label.
func (t *RepoTemplate) URL(cluster string) (string, error) {
	if errs := validation.IsDNS1123Label(cluster); len(errs) > 0 {
		return "", fmt.Errorf("invalid cluster name %q for a works repository: %s", cluster, errs[0])
	}
	url := strings.ReplaceAll(t.tmpl, ClusterPlaceholder, cluster)
	ep, err := transport.NewEndpoint(url)
	if err != nil || !sameServer(t.ep, ep) {
		return "", fmt.Errorf("works repository of %q leaves %s", cluster, gitrepo.RedactURL(t.tmpl))
	}
	return url, nil
}

// String is the template without credentials.
func (t *RepoTemplate) String() string { return gitrepo.RedactURL(t.tmpl) }

func sameServer(a, b *transport.Endpoint) bool {
	return a.Protocol == b.Protocol && a.User == b.User && a.Password == b.Password && a.Host == b.Host && a.Port == b.Port
}
