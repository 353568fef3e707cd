package override

import (
	"regexp"
	"testing"

	"github.com/distribution/reference"
	"github.com/opencontainers/go-digest"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

var (
	fuzzComponents = []string{"Registry", "Repository", "Tag", "Layer"}
	fuzzOperators  = []string{"add", "replace", "remove", "merge"}
	anchoredDomain = regexp.MustCompile(`^(?:` + reference.DomainRegexp.String() + `)$`)
	anchoredName   = regexp.MustCompile(`^(?:` + reference.NameRegexp.String() + `)$`)
)

// FuzzImageOverride checks that overrideImage never panics, that a no-op
// returns the (rebuilt) input, and that an edit with well-formed parts
// gives a reference that parses again.
//
//	go test -fuzz=FuzzImageOverride -fuzztime=5s ./internal/override
func FuzzImageOverride(f *testing.F) {
	f.Add("fictional.registry.example/imagename:v1.0.0", uint8(0), uint8(0), ".test")
	f.Add("fictional.registry.example/imagename:v1.0.0", uint8(0), uint8(2), "")
	f.Add("fictional.registry.example/imagename:v1.0.0", uint8(1), uint8(0), "/nginx")
	f.Add("fictional.registry.example/imagename:v1.0.0", uint8(2), uint8(1), testDigest)
	f.Add("fictional.registry.example/imagename:v1.0.0", uint8(2), uint8(0), testDigest)
	f.Add("perl:5.34.0", uint8(0), uint8(0), "registry.k8s.io")
	f.Add("localhost:5000/a/b:1", uint8(1), uint8(2), "")
	f.Add("repo:1.0@"+testDigest, uint8(2), uint8(2), "")
	f.Add("nginx", uint8(2), uint8(0), "1.25")
	f.Add("[::1]:5000/a", uint8(3), uint8(3), "x")
	f.Fuzz(func(t *testing.T, in string, component, operator uint8, value string) {
		o := policyv1alpha1.ImageOverrider{
			Component: fuzzComponents[int(component)%len(fuzzComponents)],
			Operator:  fuzzOperators[int(operator)%len(fuzzOperators)],
			Value:     value,
		}
		got, err := overrideImage(in, o)
		orig, parseErr := parseImage(in)
		switch {
		case parseErr != nil || o.Component == "Layer":
			if err == nil {
				t.Fatalf("overrideImage(%q, %+v) = %q, want an error", in, o, got)
			}
			return
		case err != nil:
			t.Fatalf("overrideImage(%q, %+v): %v", in, o, err)
		}
		if noop(orig, o) {
			if got != orig.String() {
				t.Fatalf("overrideImage(%q, %+v) = %q, want the input %q unchanged", in, o, got, orig.String())
			}
			return
		}
		if wellFormed(orig, o) {
			if _, err := parseImage(got); err != nil {
				t.Fatalf("overrideImage(%q, %+v) = %q, which does not parse: %v", in, o, got, err)
			}
		}
	})
}

// noop reports whether Karmada's rules leave the components unchanged.
func noop(im image, o policyv1alpha1.ImageOverrider) bool {
	switch o.Operator {
	case "add", "replace", "remove":
	default:
		return true
	}
	switch o.Component {
	case "Registry":
		return o.Operator == "add" && o.Value == "" ||
			o.Operator == "replace" && o.Value == im.host ||
			o.Operator == "remove" && im.host == ""
	case "Repository":
		return o.Operator == "add" && o.Value == "" || o.Operator == "replace" && o.Value == im.repo
	}
	next := o.Value
	switch o.Operator {
	case "remove":
		return im.tag == "" && im.digest == ""
	case "add":
		next = im.tagOrDigest() + o.Value
	}
	return !tagPattern.MatchString(next) && !digestPattern.MatchString(next) || next == im.tagOrDigest()
}

// wellFormed reports whether every part of the edited reference is valid,
// so the rebuilt string must parse. Repository remove is excluded: it gives
// Karmada's broken "host/:tag".
func wellFormed(im image, o policyv1alpha1.ImageOverrider) bool {
	const maxPath = 255
	switch o.Component {
	case "Registry":
		// A repository whose first segment only distribution's parser takes
		// for a host ("[0]/0": Karmada's rule sees no host) cannot take a
		// registry in front of it; Karmada's output is as broken as ours.
		host := editComponent(im.host, o.Operator, o.Value)
		return len(im.repo) <= maxPath && (host == "" || anchoredDomain.MatchString(host)) &&
			anchoredName.MatchString("x.io/"+im.repo)
	case "Repository":
		repo := editComponent(im.repo, o.Operator, o.Value)
		return repo != "" && len(repo) <= maxPath && anchoredName.MatchString("x.io/"+repo)
	}
	next := o.Value
	switch o.Operator {
	case "remove":
		return true
	case "add":
		next = im.tagOrDigest() + o.Value
	}
	return tagPattern.MatchString(next) || digest.Digest(next).Validate() == nil
}
