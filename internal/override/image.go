package override

import (
	// Registered so that sha256 and sha512 digests parse, as in Karmada's
	// imageparser; go-digest rejects algorithms whose hash is not linked in.
	_ "crypto/sha256"
	_ "crypto/sha512"
	"fmt"
	"regexp"
	"strings"

	"github.com/distribution/reference"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

var (
	// tagPattern and digestPattern decide what a Tag value sets. The digest
	// has no leading "@", so Karmada's documented "@sha256:…" example never
	// matches and is silently ignored.
	tagPattern    = regexp.MustCompile(`^(?:` + reference.TagRegexp.String() + `)$`)
	digestPattern = regexp.MustCompile(`^(?:` + reference.DigestRegexp.String() + `)$`)
)

// image is a container image reference split the way Karmada's imageparser
// splits it: no normalisation (nginx stays nginx), and at most one of tag and
// digest.
type image struct {
	host   string
	repo   string
	tag    string
	digest string
}

// parseImage splits s. The host is the part before the first "/" when that
// part contains "." or ":" or is "localhost". When s has both a tag and a
// digest, only the tag is kept.
func parseImage(s string) (image, error) {
	ref, err := reference.Parse(s)
	if err != nil {
		return image{}, fmt.Errorf("failed to parse image %q: %w", s, err)
	}
	var im image
	if named, ok := ref.(reference.Named); ok {
		im.host, im.repo = splitHost(named.Name())
	}
	if tagged, ok := ref.(reference.Tagged); ok {
		im.tag = tagged.Tag()
	} else if digested, ok := ref.(reference.Digested); ok {
		im.digest = digested.Digest().String()
	}
	return im, nil
}

// splitHost splits a repository name into its registry host and the rest.
func splitHost(name string) (host, repo string) {
	first, rest, found := strings.Cut(name, "/")
	if !found || (!strings.ContainsAny(first, ".:") && first != "localhost") {
		return "", name
	}
	return first, rest
}

// String rebuilds the reference: host, "/" when there is a host, repository,
// then ":tag", or "@digest" when there is no tag.
func (im image) String() string {
	s := im.repo
	if im.host != "" {
		s = im.host + "/" + im.repo
	}
	switch {
	case im.tag != "":
		return s + ":" + im.tag
	case im.digest != "":
		return s + "@" + im.digest
	}
	return s
}

// tagOrDigest returns the tag, or the digest when there is no tag.
func (im image) tagOrDigest() string {
	if im.tag != "" {
		return im.tag
	}
	return im.digest
}

// setTagOrDigest makes v the tag if it is a valid tag, else the digest if it
// is a valid digest; any other value leaves im unchanged.
func (im *image) setTagOrDigest(v string) {
	switch {
	case tagPattern.MatchString(v):
		im.tag, im.digest = v, ""
	case digestPattern.MatchString(v):
		im.tag, im.digest = "", v
	}
}

// removeTagOrDigest drops the tag if there is one, else the digest.
func (im *image) removeTagOrDigest() {
	if im.tag != "" {
		im.tag = ""
		return
	}
	im.digest = ""
}

// overrideImage returns s with one component edited as o says. An unknown
// operator leaves the components as they are, but the result is still the
// rebuilt string (a digest next to a tag is dropped), as in Karmada.
func overrideImage(s string, o policyv1alpha1.ImageOverrider) (string, error) {
	im, err := parseImage(s)
	if err != nil {
		return "", err
	}
	switch o.Component {
	case policyv1alpha1.ImageRegistry:
		im.host = editComponent(im.host, o.Operator, o.Value)
	case policyv1alpha1.ImageRepository:
		im.repo = editComponent(im.repo, o.Operator, o.Value)
	case policyv1alpha1.ImageTag:
		switch o.Operator {
		case policyv1alpha1.OpAdd:
			im.setTagOrDigest(im.tagOrDigest() + o.Value)
		case policyv1alpha1.OpReplace:
			im.setTagOrDigest(o.Value)
		case policyv1alpha1.OpRemove:
			im.removeTagOrDigest()
		}
	default:
		return "", fmt.Errorf("unsupported image component %q", o.Component)
	}
	return im.String(), nil
}

// editComponent applies a registry or repository operator: add concatenates, replace
// sets, remove empties; an unknown operator changes nothing.
func editComponent(current, operator, value string) string {
	switch operator {
	case policyv1alpha1.OpAdd:
		return current + value
	case policyv1alpha1.OpReplace:
		return value
	case policyv1alpha1.OpRemove:
		return ""
	}
	return current
}
