package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRenderCommandRefusesHostileNames(t *testing.T) {
	for name, doc := range map[string]string{
		"traversal": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ../../../../x\n",
		"collision": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: configmap\nmetadata:\n  name: a\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "fleet")
			if err := os.MkdirAll(src, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, "a.yaml"), []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			_, stderr := runCLI(t, 2, "render", "--source", src, "--out", out)
			if !strings.Contains(stderr, "a.yaml:") {
				t.Errorf("stderr does not name the file:\n%s", stderr)
			}
			if _, err := os.Lstat(out); !os.IsNotExist(err) {
				t.Errorf("--out exists after a refused render (%v)", err)
			}
		})
	}
}

// TestCommandHelpGolden pins the help of the commands whose flags follow
// kubectl's habits (-o for the format, --cluster, --out).
func TestCommandHelpGolden(t *testing.T) {
	for _, name := range []string{"render", "diff", "explain"} {
		stdout, _ := runCLI(t, 0, name, "--help")
		golden(t, name+"-help.txt", stdout)
	}
}

// -o is the format of the stream: yaml (the default), json or name; -o
// alone prints to stdout, and --cluster keeps the named clusters.
func TestRenderOutputFormats(t *testing.T) {
	const fleet = "../../examples/quickstart/fleet"
	for _, format := range []string{"json", "name"} {
		stdout, _ := runCLI(t, 0, "render", "--source", fleet, "-o", format, "--cluster", "member2")
		golden(t, "render."+format, stdout)
	}
	all, _ := runCLI(t, 0, "render", "--source", fleet, "-o", "name", "--cluster", "member1", "--cluster", "member2")
	comma, _ := runCLI(t, 0, "render", "--source", fleet, "-o", "name", "--cluster", "member1,member2")
	if all != comma || !strings.Contains(all, "member1/Deployment.apps/demo/nginx\n") || !strings.Contains(all, "member2/") {
		t.Errorf("repeated and comma-separated --cluster differ or miss a cluster:\n%s\n%s", all, comma)
	}
	yamlOut, _ := runCLI(t, 0, "render", "--source", fleet, "-o", "yaml", "--cluster", "member1")
	if !strings.HasPrefix(yamlOut, "# cluster: member1\n---\n") || strings.Contains(yamlOut, "member2") {
		t.Errorf("-o yaml is not member1's YAML stream:\n%s", yamlOut)
	}
	_, stderr := runCLI(t, 2, "render", "--source", fleet, "-o", "name", "--cluster", "member9")
	if !strings.Contains(stderr, "--cluster member9: no Cluster of that name is declared (clusters: member1, member2)") {
		t.Errorf("unknown cluster: %s", stderr)
	}
	_, stderr = runCLI(t, 2, "render", "--source", fleet, "-o", "json", "--out", t.TempDir())
	if !strings.Contains(stderr, "-o json prints a stream") {
		t.Errorf("-o json with a folder: %s", stderr)
	}
}

// The old meaning of -o (the output folder) works for one release, with a
// warning that names --out; -o name with --out DIR lists what was written.
func TestRenderDeprecatedOutputFolder(t *testing.T) {
	const fleet = "../../examples/quickstart/fleet"
	out := filepath.Join(t.TempDir(), "rendered")
	_, stderr := runCLI(t, 0, "render", "--source", fleet, "-o", out)
	if !strings.Contains(stderr, "warning: -o "+out+" as the output folder is deprecated") || !strings.Contains(stderr, "use --out "+out) {
		t.Errorf("no deprecation warning naming --out:\n%s", stderr)
	}
	if diff := cmp.Diff(readTree(t, "../../examples/quickstart/rendered"), readTree(t, out)); diff != "" {
		t.Errorf("-o DIR did not write the render (-want +got):\n%s", diff)
	}
	stdout, stderr := runCLI(t, 0, "render", "--source", fleet, "--out", out, "-o", "name", "--cluster", "member1")
	if strings.Contains(stderr, "deprecated") || stdout != "member1/Namespace.core/demo\nmember1/Deployment.apps/demo/nginx\nmember1/Service.core/demo/nginx\n" {
		t.Errorf("--out DIR -o name: stdout %q, stderr %q", stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "member2")); !os.IsNotExist(err) {
		t.Errorf("--cluster member1 wrote member2 (%v)", err)
	}
	_, stderr = runCLI(t, 2, "render", "--source", fleet, "--out", out, "-o", "xml")
	if !strings.Contains(stderr, `-o "xml": want one of yaml, json, name`) {
		t.Errorf("unknown format with --out: %s", stderr)
	}
}

// Rendering a folder into a folder inside it works again and again: the
// earlier output holds the render marker and is not read as source.
func TestRenderIntoItsOwnSource(t *testing.T) {
	src := filepath.Join(t.TempDir(), "fleet")
	copyFleet(t, src, func(s string) string { return s })
	writeFile(t, filepath.Join(src, "mkdocs.yml"), "site_name: fleet\n")
	out := filepath.Join(src, "rendered")
	for range 2 {
		_, stderr := runCLI(t, 0, "render", "--source", src, "--out", out)
		if !strings.Contains(stderr, "warning: mkdocs.yml:1: not a Kubernetes object") {
			t.Errorf("no notice for mkdocs.yml:\n%s", stderr)
		}
	}
	if diff := cmp.Diff(readTree(t, "../../examples/quickstart/rendered"), readTree(t, out)); diff != "" {
		t.Errorf("render into its own source (-want +got):\n%s", diff)
	}
}
