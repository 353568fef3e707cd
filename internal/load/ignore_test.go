package load

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func findingStrings(s *Set) []string {
	var out []string
	for _, f := range s.Findings {
		out = append(out, f.String())
	}
	return out
}

// A repository holds more than manifests: YAML that is no Kubernetes
// object is skipped with one notice per file, what .propagitignore lists
// is not read at all (gitignore syntax: negation, folder patterns, **).
func TestIgnoreFileAndNonObjects(t *testing.T) {
	set := mustLoad(t, map[string]string{
		IgnoreFile:                    "# docs and CI\ndocs/\n**/*.tmpl.yaml\nhelm/*\n!helm/keep.yaml\n\n",
		"mkdocs.yml":                  "site_name: fleet\nnav:\n  - index.md\nmarkdown_extensions:\n  - pymdownx.superfences\n",
		"docker-compose.yaml":         "services:\n  web:\n    image: nginx\n---\nservices: {}\n",
		"ansible.yaml":                "- hosts: all\n  tasks: []\n",
		".github/workflows/ci.yml":    "on: push\n", // hidden: never read
		"docs/broken.yaml":            "not: [valid",
		"apps/web.tmpl.yaml":          "{{ .Values.broken",
		"apps/web.yaml":               cm("web"),
		"helm/chart.yaml":             "not: [valid",
		"helm/keep.yaml":              cm("kept"),
		"deep/er/values.tmpl.yaml":    "not: [valid",
		"deep/er/config.yaml":         cm("deep"),
		"kustomize-like/config.yaml":  "resources: [a.yaml]\n",
		"empty.yaml":                  "",
		"comment-only/only.yaml":      "# nothing\n",
		"list-of-objects/items.yaml":  "apiVersion: v1\nkind: List\nitems:\n- " + "apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: listed}\n",
		"folder/keep/not-ignored.yml": cm("folder"),
	})
	if diff := cmp.Diff([]string{"default/web", "default/deep", "default/folder", "default/kept", "default/listed"}, templateNames(set)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	want := []string{
		"ansible.yaml:1: not a Kubernetes object (no apiVersion and kind): the file is skipped; list it in .propagitignore to silence this",
		"docker-compose.yaml:1: no document is a Kubernetes object (no apiVersion and kind): the file is skipped; list it in .propagitignore to silence this",
		"kustomize-like/config.yaml:1: not a Kubernetes object (no apiVersion and kind): the file is skipped; list it in .propagitignore to silence this",
		"mkdocs.yml:1: not a Kubernetes object (no apiVersion and kind): the file is skipped; list it in .propagitignore to silence this",
	}
	if diff := cmp.Diff(want, findingStrings(set)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// A document that claims to be an object stays an error with its line,
// even when the file also holds non-objects; and a file the ignore file
// does not list is read as before.
func TestNonObjectSkipKeepsMalformedObjectsErrors(t *testing.T) {
	got := problemsOf(t, map[string]string{
		IgnoreFile: "other/\n",
		"a.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata: {k: [v\n",
		"b.yaml":   "kind: Deployment\nmetadata: {name: b}\n",
	})
	want := []string{"a.yaml:5: invalid YAML: did not find expected ',' or ']'", "b.yaml:1: not a Kubernetes object: apiVersion required"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// A folder holding an earlier render's marker is not read, so rendering a
// folder that contains its own output does not define everything twice.
func TestEarlierRenderFolderIsSkipped(t *testing.T) {
	set := mustLoad(t, map[string]string{
		"apps/web.yaml":            cm("web"),
		"rendered/" + RenderMarker: "written by propagit render; this folder is replaced on the next render\n",
		"rendered/member1/default/configmap.core_web.yaml": cm("web"),
	})
	if diff := cmp.Diff([]string{"default/web"}, templateNames(set)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"rendered: holds .propagit-render: an earlier propagit render, not read"}, findingStrings(set)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	// The root itself is always read.
	root := mustLoad(t, map[string]string{RenderMarker: "x\n", "member1/default/configmap.core_web.yaml": cm("web")})
	if len(root.Templates) != 1 {
		t.Errorf("a render marker at the root hid the source: %v", templateNames(root))
	}
}
