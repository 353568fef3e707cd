package override

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
)

func TestParseImage(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    image
		wantErr bool
	}{
		{
			name: "registry with dots is a host",
			in:   "fictional.registry.example/imagename:v1.0.0",
			want: image{host: "fictional.registry.example", repo: "imagename", tag: "v1.0.0"},
		},
		{
			name: "registry port makes a host and is not a tag",
			in:   "localhost:5000/a/b:1",
			want: image{host: "localhost:5000", repo: "a/b", tag: "1"},
		},
		{
			name: "localhost without port is a host",
			in:   "localhost/a",
			want: image{host: "localhost", repo: "a"},
		},
		{
			name: "bare library image is not normalised",
			in:   "nginx",
			want: image{repo: "nginx"},
		},
		{
			name: "first component without dot or colon is part of the repository",
			in:   "library/nginx:1.25",
			want: image{repo: "library/nginx", tag: "1.25"},
		},
		{
			name: "digest without tag is kept",
			in:   "repo@" + testDigest,
			want: image{repo: "repo", digest: testDigest},
		},
		{
			name: "tag next to digest drops the digest",
			in:   "repo:1.0@" + testDigest,
			want: image{repo: "repo", tag: "1.0"},
		},
		{
			name: "ipv6 registry with port is a host",
			in:   "[::1]:5000/a:b",
			want: image{host: "[::1]:5000", repo: "a", tag: "b"},
		},
		{name: "uppercase repository fails", in: "Nginx", wantErr: true},
		{name: "empty string fails", in: "", wantErr: true},
		{name: "unsupported digest algorithm fails", in: "repo@md5:0123456789abcdef0123456789abcdef", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseImage(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseImage(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(image{})); diff != "" {
				t.Errorf("parseImage(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestImageStringRoundTrips(t *testing.T) {
	for _, in := range []string{
		"nginx",
		"perl:5.34.0",
		"localhost:5000/a/b:1",
		"fictional.registry.example/imagename@" + testDigest,
		"[::1]:5000/a",
	} {
		im, err := parseImage(in)
		if err != nil {
			t.Fatalf("parseImage(%q): %v", in, err)
		}
		if got := im.String(); got != in {
			t.Errorf("parseImage(%q).String() = %q", in, got)
		}
	}
}

func TestOverrideImage(t *testing.T) {
	const img = "fictional.registry.example/imagename:v1.0.0"
	tests := []struct {
		name      string
		in        string
		component string
		operator  string
		value     string
		want      string
		wantErr   string
	}{
		// The examples of karmada-semantics.md §6.3.
		{"registry add concatenates", img, "Registry", "add", ".test", "fictional.registry.example.test/imagename:v1.0.0", ""},
		{"registry remove drops the host", img, "Registry", "remove", "", "imagename:v1.0.0", ""},
		{"repository add concatenates", img, "Repository", "add", "/nginx", "fictional.registry.example/imagename/nginx:v1.0.0", ""},
		{"tag replace with a digest swaps tag for digest", img, "Tag", "replace", testDigest, "fictional.registry.example/imagename@" + testDigest, ""},
		{"tag add of a digest is silently ignored", img, "Tag", "add", testDigest, img, ""},
		{"registry add on an image without host prefixes it", "perl:5.34.0", "Registry", "add", "registry.k8s.io", "registry.k8s.io/perl:5.34.0", ""},
		// Registry.
		{"registry replace keeps the port-less repository", "localhost:5000/a/b:1", "Registry", "replace", "registry.k8s.io", "registry.k8s.io/a/b:1", ""},
		{"registry remove on a registry with port", "localhost:5000/a/b:1", "Registry", "remove", "", "a/b:1", ""},
		{"registry replace on a bare image adds a host", "nginx", "Registry", "replace", "mirror.example:5000", "mirror.example:5000/nginx", ""},
		{"registry add of an empty value changes nothing", img, "Registry", "add", "", img, ""},
		// Repository.
		{"repository replace", "localhost:5000/a/b:1", "Repository", "replace", "c", "localhost:5000/c:1", ""},
		{"repository remove leaves Karmada's broken host/:tag", img, "Repository", "remove", "", "fictional.registry.example/:v1.0.0", ""},
		// Tag.
		{"tag add appends to the tag", "perl:5.34", "Tag", "add", ".0", "perl:5.34.0", ""},
		{"tag add on an image without tag sets the value as tag", "nginx", "Tag", "add", "1.25", "nginx:1.25", ""},
		{"tag replace on a digest sets a tag", "repo@" + testDigest, "Tag", "replace", "v2", "repo:v2", ""},
		{"tag replace with @digest is silently ignored", img, "Tag", "replace", "@" + testDigest, img, ""},
		{"tag replace with an invalid tag is silently ignored", img, "Tag", "replace", "-bad", img, ""},
		{"tag remove drops the tag", img, "Tag", "remove", "", "fictional.registry.example/imagename", ""},
		{"tag remove drops the digest when there is no tag", "repo@" + testDigest, "Tag", "remove", "", "repo", ""},
		{"tag remove on tag and digest leaves neither", "repo:1.0@" + testDigest, "Tag", "remove", "", "repo", ""},
		// Unknown operators and components.
		{"unknown operator still drops a digest next to a tag", "repo:1.0@" + testDigest, "Tag", "merge", "x", "repo:1.0", ""},
		{"unknown component fails", img, "Digest", "replace", "x", "", `unsupported image component "Digest"`},
		{"unparsable image fails", "Nginx:1", "Tag", "replace", "2", "", `failed to parse image "Nginx:1": repository name must be lowercase`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := overrideImage(tt.in, policyv1alpha1.ImageOverrider{Component: tt.component, Operator: tt.operator, Value: tt.value})
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Fatalf("error mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("image mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
