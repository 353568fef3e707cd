package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/propagit/propagit/internal/diff"
	"github.com/propagit/propagit/internal/verify/verifytest"
)

// stageFleet writes a fleet of one cluster, m1, that receives ConfigMap
// demo/app with data value, into r's folder fleet/, and stages it for r's
// next commit.
func stageFleet(t *testing.T, r *signedRepo, value string) {
	t.Helper()
	files := map[string]string{
		"clusters/m1.yaml": fmt.Sprintf(fleetCluster, "m1"),
		"namespace.yaml":   fleetNamespace,
		"policy.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: app
  namespace: demo
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
  placement:
    clusterAffinity:
      clusterNames: [m1]
`,
		"app.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: demo\ndata:\n  value: " + value + "\n",
	}
	for name, content := range files {
		p := filepath.Join(r.dir, "fleet", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.wt.Add("fleet"); err != nil {
		t.Fatal(err)
	}
}

// TestSupplyChainDiffNotesSignature: diff --trusted-keys says under the
// title of its text and markdown reports, and in the JSON report's
// signatures (decoded back: mode, verified, error, and each commit checked
// with its signer or reason), whether the head would pass the controller's
// verification: signed by a trusted key (who), unsigned, signed by a key
// that is not trusted, and, with --verify-commits all, an unsigned commit
// between the base and a signed head. The rest of each report and the exit
// status are what they are without the flag, and the JSON report has no
// signatures without it.
func TestSupplyChainDiffNotesSignature(t *testing.T) {
	release := verifytest.SSHKey(t, "release@example.com")
	mallory := verifytest.SSHKey(t, "mallory@example.com")
	keys := verifytest.TrustedKeys(t, release)
	r := newSignedRepo(t)
	stageFleet(t, r, "v1")
	base := r.commit(release)
	stageFleet(t, r, "v2")
	unsigned := r.commit(nil)
	stageFleet(t, r, "v3")
	signed := r.commit(release)
	stageFleet(t, r, "v4")
	signed2 := r.commit(release)
	stageFleet(t, r, "v5")
	forged := r.commit(mallory)
	src := filepath.Join(r.dir, "fleet")
	refuse := ": the controller will refuse this revision"

	for _, tc := range []struct {
		name       string
		from, head string
		extra      []string
		// text is the whole line (or its start and end, around "…").
		text string
		md   string
		// commits are the commits the JSON report lists, newest first,
		// each as "hash signer" (verifies) or "hash !Reason".
		commits []string
	}{
		{"signed by a trusted key", base, signed, nil,
			"Signed: yes, by release@example.com", "**Signed: yes**, by `release@example.com`",
			[]string{signed + " release@example.com"}},
		{"unsigned", base, unsigned, nil,
			"Signed: NO — commit " + shortRev(unsigned) + ": not signed" + refuse,
			":x: **Signed: NO** — commit " + shortRev(unsigned) + ": not signed" + refuse,
			[]string{unsigned + " !Unsigned"}},
		{"signed by a key that is not trusted", base, forged, nil,
			"Signed: NO — commit " + shortRev(forged) + ": SSH key SHA256:…is not in the trusted keys" + refuse,
			":x: **Signed: NO** — commit " + shortRev(forged) + ": SSH key SHA256:…is not in the trusted keys" + refuse,
			[]string{forged + " !UntrustedKey"}},
		{"all: an unsigned commit between the base and a signed head", base, signed, []string{"--verify-commits", "all"},
			"Signed: NO — commit " + shortRev(unsigned) + ": not signed" + refuse,
			":x: **Signed: NO** — commit " + shortRev(unsigned) + ": not signed" + refuse,
			[]string{signed + " release@example.com", unsigned + " !Unsigned"}},
		{"all: every commit since the base signed", unsigned, signed2, []string{"--verify-commits", "all"},
			"Signed: yes, by release@example.com (2 commits)", "**Signed: yes**, by `release@example.com` (2 commits)",
			[]string{signed2 + " release@example.com", signed + " release@example.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"diff", src, "--base", tc.from, "--head", tc.head}
			keyed := append([]string{"--trusted-keys", keys}, tc.extra...)
			for _, f := range []struct {
				format string
				want   string
				// title is the report's first paragraph.
				title string
			}{
				{"text", tc.text, "propagit diff " + shortRev(tc.from) + " → " + shortRev(tc.head)},
				{"markdown", tc.md, diff.Marker + "\n### propagit diff"},
			} {
				plain, _ := runCLI(t, 0, append(args, "-o", f.format)...)
				got, _ := runCLI(t, 0, append(append(args, "-o", f.format), keyed...)...)
				t.Logf("-o %s:\n%s", f.format, got)
				head, rest, ok := strings.Cut(got, "\n\n")
				line, after, ok2 := strings.Cut(rest, "\n\n")
				if !ok || !ok2 || head != f.title {
					t.Fatalf("-o %s: the report does not start with its title %q and a line:\n%s", f.format, f.title, got)
				}
				if !lineMatches(line, f.want) {
					t.Errorf("-o %s: line %q, want %q", f.format, line, f.want)
				}
				if head+"\n\n"+after != plain {
					t.Errorf("-o %s: the report without the line differs from the report without --trusted-keys:\n%s\n---\n%s", f.format, got, plain)
				}
			}
			plainJSON, _ := runCLI(t, 0, append(args, "-o", "json")...)
			gotJSON, _ := runCLI(t, 0, append(append(args, "-o", "json"), keyed...)...)
			plain, got := decodeDiff(t, plainJSON), decodeDiff(t, gotJSON)
			if strings.Contains(plainJSON, `"signatures"`) || plain.Signatures != nil {
				t.Errorf("-o json without --trusted-keys has signatures:\n%s", plainJSON)
			}
			sigs := got.Signatures
			if sigs == nil {
				t.Fatalf("-o json with --trusted-keys has no signatures:\n%s", gotJSON)
			}
			mode := "tip"
			if len(tc.extra) > 0 {
				mode = "all"
			}
			verified := !strings.HasPrefix(tc.text, "Signed: NO")
			if sigs.Mode != mode || !sigs.Checked || sigs.Verified != verified {
				t.Errorf("-o json: signatures mode %q, checked %v, verified %v; want %q, true, %v", sigs.Mode, sigs.Checked, sigs.Verified, mode, verified)
			}
			if wantErr := strings.TrimSuffix(strings.TrimPrefix(tc.text, "Signed: NO — "), refuse); verified && sigs.Error != "" || !verified && !lineMatches(sigs.Error, wantErr) {
				t.Errorf("-o json: signatures error %q, want %q", sigs.Error, map[bool]string{true: "", false: wantErr}[verified])
			}
			var commits []string
			for _, c := range sigs.Commits {
				switch {
				case c.Reason == "" && c.Message == "" && c.Method == "ssh" && strings.HasPrefix(c.Key, "SHA256:"):
					commits = append(commits, c.Commit+" "+c.Signer)
				case c.Reason != "" && c.Message != "":
					commits = append(commits, c.Commit+" !"+c.Reason)
				default:
					commits = append(commits, fmt.Sprintf("%+v", c))
				}
			}
			if !slices.Equal(commits, tc.commits) {
				t.Errorf("-o json: signatures commits %q, want %q", commits, tc.commits)
			}
			got.Signatures = nil
			if !reflect.DeepEqual(got, plain) {
				t.Errorf("-o json: the report besides signatures differs from the report without --trusted-keys:\n%s\n---\n%s", gotJSON, plainJSON)
			}
		})
	}

	// The head is the working tree: nothing signed yet.
	out, _ := runCLI(t, 0, "diff", src, "--base", base, "--trusted-keys", keys)
	if want := "\n\nSigned: not checked — the head is the working tree, not a commit\n\n"; !strings.Contains(out, want) {
		t.Errorf("working tree head: want %q in\n%s", want, out)
	}
	out, _ = runCLI(t, 0, "diff", src, "--base", base, "--trusted-keys", keys, "-o", "json")
	if s := decodeDiff(t, out).Signatures; s == nil || s.Checked || s.Verified || s.Error != "the head is the working tree, not a commit" || s.Commits == nil || len(s.Commits) != 0 {
		t.Errorf("working tree head: -o json signatures %+v, want not checked, not verified, why, and no commit", s)
	}
	// --exit-code keeps its meaning: 1 when something differs, signed or not.
	runCLI(t, 1, "diff", src, "--base", base, "--head", unsigned, "--trusted-keys", keys, "--exit-code")
	runCLI(t, 0, "diff", src, "--base", signed2, "--head", signed2, "--trusted-keys", keys, "--exit-code")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "--base-dir", src, "--head-dir", src, "--trusted-keys", keys}, "--trusted-keys reads Git"},
		{[]string{"diff", src, "--base", base, "--head", signed, "--verify-commits", "all"}, "--verify-commits goes with --trusted-keys"},
		{[]string{"diff", src, "--base", base, "--head", signed, "--verify-commits", "off", "--trusted-keys", keys}, `invalid --verify-commits "off"`},
		{[]string{"diff", src, "--base", base, "--head", signed, "--trusted-keys", filepath.Join(r.dir, "missing")}, "missing"},
	} {
		stdout, stderr := runCLI(t, 2, tc.args...)
		if stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: stdout %q, stderr %q; want no report and an error saying %q", tc.args, stdout, stderr, tc.want)
		}
	}
}

// decodeDiff decodes diff's JSON report, failing on a field the report
// does not know.
func decodeDiff(t *testing.T, out string) diff.Report {
	t.Helper()
	var r diff.Report
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("the JSON report does not decode: %v\n%s", err, out)
	}
	return r
}

// lineMatches reports whether line is want, or, when want holds "…",
// starts with what comes before it and ends with what comes after.
func lineMatches(line, want string) bool {
	prefix, suffix, cut := strings.Cut(want, "…")
	if !cut {
		return line == want
	}
	return strings.HasPrefix(line, prefix) && strings.HasSuffix(line, suffix) && len(line) >= len(prefix)+len(suffix)
}
