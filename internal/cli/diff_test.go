package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/diff"
)

// The scripted history of the diff tests: a fleet of two clusters, then one
// commit (and one tag) per scenario of issue #4. Commits have a fixed
// author and time, so their hashes, which the golden files show, are stable.
const (
	fleetCluster = `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: %s
  labels:
    environment: production
spec:
  syncMode: Push
  apiEndpoint: https://%[1]s.example.internal:6443
`
	fleetNamespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n"
	fleetWeb       = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels:
    app: web
spec:
  replicas: 6
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: registry.example.com/team/web:1.4.0
`
	fleetWebService = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: demo
spec:
  selector:
    app: web
  ports:
  - port: 80
`
	fleetWorker = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
  namespace: demo
spec:
  replicas: 2
  selector:
    matchLabels:
      app: worker
  template:
    metadata:
      labels:
        app: worker
    spec:
      containers:
      - name: worker
        image: registry.example.com/team/worker:2.0.0
`
	fleetSecret = `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: demo
type: Opaque
data:
  password: %s
  username: YXBw
stringData:
  token: plain-token-value-42
`
	fleetWebPolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: web
  namespace: demo
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: web
  - apiVersion: v1
    kind: Service
    name: web
  placement:
    clusterAffinity:
      clusterNames: [member1, member2]
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - targetCluster: {clusterNames: [member1]}
          weight: 1
        - targetCluster: {clusterNames: [member2]}
          weight: %d
`
	fleetWorkerPolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: worker
  namespace: demo
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: worker
  placement:
    clusterAffinity:
      clusterNames: [%s]
`
	fleetSecretPolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: db
  namespace: demo
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: Secret
    name: db
  placement: {}
`
	fleetWebOverride = `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata:
  name: web-eu
  namespace: demo
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: web
  overrideRules:
  - targetCluster:
      clusterNames: [member2]
    overriders:
      imageOverrider:
      - component: Registry
        operator: replace
        value: %s
`
)

// The Secret values of the history; no output may contain them.
const (
	secretBase  = "super-secret-base"
	secretHead  = "super-secret-head"
	secretToken = "plain-token-value-42"
)

// diffScenarios are the tagged commits of the history, each compared with
// the one before it.
var diffScenarios = []struct{ name, base, head string }{
	{"policy-move", "base", "policy-move"},
	{"override", "policy-move", "override"},
	{"new-cluster", "override", "new-cluster"},
	{"template-deleted", "new-cluster", "template-deleted"},
	{"secret-changed", "template-deleted", "secret-changed"},
}

// fleetRepo builds the scripted history in a temporary working copy and
// returns its folder; main is checked out at the last scenario.
func fleetRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := &committer{t: t, dir: dir, repo: repo}
	c.commit("base", map[string]string{
		"fleet/clusters/member1.yaml":       sprintf(fleetCluster, "member1"),
		"fleet/clusters/member2.yaml":       sprintf(fleetCluster, "member2"),
		"fleet/namespaces/demo.yaml":        fleetNamespace,
		"fleet/apps/web/deployment.yaml":    fleetWeb,
		"fleet/apps/web/service.yaml":       fleetWebService,
		"fleet/apps/worker/deployment.yaml": fleetWorker,
		"fleet/apps/db/secret.yaml":         sprintf(fleetSecret, b64(secretBase)),
		"fleet/policies/web.yaml":           sprintf(fleetWebPolicy, 1),
		"fleet/policies/worker.yaml":        sprintf(fleetWorkerPolicy, "member1"),
		"fleet/policies/db.yaml":            fleetSecretPolicy,
		"fleet/policies/web-override.yaml":  sprintf(fleetWebOverride, "eu.registry.example.com"),
		"README.md":                         "the fleet of the diff tests\n",
	})
	c.commit("policy-move", map[string]string{
		"fleet/policies/web.yaml":    sprintf(fleetWebPolicy, 2),
		"fleet/policies/worker.yaml": sprintf(fleetWorkerPolicy, "member2"),
	})
	c.commit("override", map[string]string{"fleet/policies/web-override.yaml": sprintf(fleetWebOverride, "eu2.registry.example.com")})
	c.commit("new-cluster", map[string]string{"fleet/clusters/member3.yaml": sprintf(fleetCluster, "member3")})
	c.commit("template-deleted", map[string]string{"fleet/apps/web/service.yaml": ""})
	c.commit("secret-changed", map[string]string{"fleet/apps/db/secret.yaml": sprintf(fleetSecret, b64(secretHead))})
	return dir
}

// committer writes files and commits them with a fixed author and time.
type committer struct {
	t    testing.TB
	dir  string
	repo *git.Repository
	n    int
}

// commit writes files ("" deletes one), commits everything and tags the
// commit with msg.
func (c *committer) commit(msg string, files map[string]string) plumbing.Hash {
	c.t.Helper()
	for name, content := range files {
		p := filepath.Join(c.dir, filepath.FromSlash(name))
		var err error
		if content == "" {
			err = os.Remove(p)
		} else if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			c.t.Fatal(err)
		}
	}
	wt, err := c.repo.Worktree()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		c.t.Fatal(err)
	}
	when := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(c.n) * time.Hour)
	c.n++
	sig := &object.Signature{Name: "Fleet Tester", Email: "fleet@example.com", When: when}
	hash, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.repo.CreateTag(msg, hash, nil); err != nil {
		c.t.Fatal(err)
	}
	return hash
}

func sprintf(format string, args ...any) string {
	return strings.TrimSpace(fmt.Sprintf(format, args...)) + "\n"
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

var diffFormats = map[string]string{"text": "txt", "markdown": "md", "json": "json"}

// TestDiffGolden pins the text, markdown and JSON output of every scenario.
func TestDiffGolden(t *testing.T) {
	dir := fleetRepo(t)
	for _, sc := range diffScenarios {
		for format, ext := range diffFormats {
			t.Run(sc.name+"/"+format, func(t *testing.T) {
				out, _ := runCLI(t, 0, "diff", filepath.Join(dir, "fleet"), "--base", sc.base, "--head", sc.head, "-o", format)
				golden(t, "diff/"+sc.name+"."+ext, out)
				if format == "markdown" && !strings.HasPrefix(out, diff.Marker+"\n") {
					t.Errorf("markdown does not start with the marker line %q", diff.Marker)
				}
			})
		}
	}
}

// TestDiffNeverPrintsSecretValues searches every output, and stderr, for
// the Secret's values, raw and base64-encoded.
func TestDiffNeverPrintsSecretValues(t *testing.T) {
	dir := fleetRepo(t)
	secrets := []string{secretBase, secretHead, secretToken, b64(secretBase), b64(secretHead), b64(secretToken), "YXBw"}
	ranges := [][2]string{{"base", "secret-changed"}, {"template-deleted", "secret-changed"}, {"override", "new-cluster"}}
	for _, r := range ranges {
		for format := range diffFormats {
			stdout, stderr := runCLI(t, 0, "diff", filepath.Join(dir, "fleet"), "--base", r[0], "--head", r[1], "-o", format)
			if !strings.Contains(stdout, "Secret") {
				t.Fatalf("%s..%s -o %s: the Secret is not in the output, the test proves nothing:\n%s", r[0], r[1], format, stdout)
			}
			for _, s := range secrets {
				if strings.Contains(stdout, s) || strings.Contains(stderr, s) {
					t.Errorf("%s..%s -o %s prints the secret value %q", r[0], r[1], format, s)
				}
			}
		}
	}
	// A Secret removed from the fleet is shown as <redacted>. (Unselecting
	// it would leave it unclaimed, running as it was: nothing to show.)
	if err := os.Remove(filepath.Join(dir, "fleet/apps/db/secret.yaml")); err != nil {
		t.Fatal(err)
	}
	stdout, _ := runCLI(t, 0, "diff", filepath.Join(dir, "fleet"))
	for _, s := range secrets {
		if strings.Contains(stdout, s) {
			t.Errorf("removing the Secret prints its value %q", s)
		}
	}
	if !strings.Contains(stdout, "-  password: <redacted>") {
		t.Errorf("removed Secret: want its values as <redacted>:\n%s", stdout)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDiffReportsMoves checks that an object leaving one cluster for
// another is a move, not an add and a delete.
func TestDiffReportsMoves(t *testing.T) {
	dir := fleetRepo(t)
	out, _ := runCLI(t, 0, "diff", filepath.Join(dir, "fleet"), "--base", "base", "--head", "policy-move", "-o", "json")
	var r diff.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	want := []diff.Move{{Ref: diff.Ref{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "worker"}, From: "member1", To: "member2"}}
	if d := cmp.Diff(want, r.Moves); d != "" {
		t.Errorf("moves (-want +got):\n%s", d)
	}
	if len(r.Deletions) != 0 {
		t.Errorf("a move is not a deletion: %+v", r.Deletions)
	}
	text, _ := runCLI(t, 0, "diff", filepath.Join(dir, "fleet"), "--base", "base", "--head", "policy-move")
	for _, s := range []string{"Deployment.apps/demo/worker moved from member1 to member2", "+ Deployment.apps/demo/worker added (moved from member1, identical)", "- Deployment.apps/demo/worker removed (moved to member2)"} {
		if !strings.Contains(text, s) {
			t.Errorf("text output lacks %q:\n%s", s, text)
		}
	}
}

// TestDiffExitCode checks 0 without --exit-code, 1 with it when anything
// differs, 0 when nothing does, and 2 on errors.
func TestDiffExitCode(t *testing.T) {
	dir := fleetRepo(t)
	args := []string{"diff", filepath.Join(dir, "fleet")}
	runCLI(t, 0, append(args, "--base", "base", "--head", "override")...)
	runCLI(t, 1, append(args, "--base", "base", "--head", "override", "--exit-code")...)
	out, _ := runCLI(t, 0, append(args, "--base", "override", "--head", "override", "--exit-code")...)
	if !strings.Contains(out, "No differences") {
		t.Errorf("same revision twice: want no differences, got:\n%s", out)
	}
	runCLI(t, 0, append(args, "--exit-code")...) // HEAD against a clean working tree
	_, stderr := runCLI(t, 2, append(args, "--base", "no-such-branch", "--exit-code")...)
	if !strings.Contains(stderr, `base: failed to resolve revision "no-such-branch"`) {
		t.Errorf("unknown base: stderr = %s", stderr)
	}
	runCLI(t, 2, append(args, "-o", "yaml")...)
	runCLI(t, 2, "diff", dir+"//../fleet")
	runCLI(t, 2, "diff", t.TempDir())
}

// TestDiffRenderErrorNamesSideFileLine breaks a policy on a branch and
// expects the side, the revision, the file and the line.
func TestDiffRenderErrorNamesSideFileLine(t *testing.T) {
	dir := fleetRepo(t)
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(sprintf(fleetWorkerPolicy, "member2"), "  placement:\n", "  placement:\n    clusterAffinty: {}\n", 1)
	c := &committer{t: t, dir: dir, repo: repo, n: 10}
	hash := c.commit("broken", map[string]string{"fleet/policies/worker.yaml": broken})
	short := hash.String()[:7]
	args := []string{"diff", filepath.Join(dir, "fleet")}
	_, stderr := runCLI(t, 2, append(args, "--base", "secret-changed", "--head", "broken")...)
	want := "error: head (" + short + "): fleet/policies/worker.yaml:12: spec.placement.clusterAffinty: "
	if !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr = %q, want it to start with %q", stderr, want)
	}
	_, stderr = runCLI(t, 2, append(args, "--base", "broken", "--head", "secret-changed")...)
	if !strings.HasPrefix(stderr, "error: base ("+short+"): fleet/policies/worker.yaml:12: ") {
		t.Errorf("broken base: stderr = %q", stderr)
	}
	_, stderr = runCLI(t, 2, args...) // the broken commit is checked out
	if !strings.HasPrefix(stderr, "error: base ("+short+"): fleet/policies/worker.yaml:12: ") {
		t.Errorf("broken HEAD: stderr = %q", stderr)
	}
}

// TestDiffWorkingTree sees an uncommitted edit with the default --head.
func TestDiffWorkingTree(t *testing.T) {
	dir := fleetRepo(t)
	writeFile(t, filepath.Join(dir, "fleet/apps/worker/deployment.yaml"), strings.Replace(fleetWorker, "replicas: 2", "replicas: 7", 1))
	out, _ := runCLI(t, 1, "diff", filepath.Join(dir, "fleet"), "--exit-code")
	for _, s := range []string{"propagit diff HEAD (", ") → working tree", "6→11", "-  replicas: 2\n+  replicas: 7\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	runCLI(t, 0, "diff", filepath.Join(dir, "fleet"), "--head", "HEAD", "--exit-code")
}

// TestDiffFileURL clones the history over file:// with no git binary on
// PATH and expects the same output as reading the folder.
func TestDiffFileURL(t *testing.T) {
	dir := fleetRepo(t)
	args := []string{"diff", "--base", "base", "--head", "policy-move"}
	want, _ := runCLI(t, 0, append(args, filepath.Join(dir, "fleet"))...)
	t.Setenv("PATH", "")
	got, _ := runCLI(t, 0, append(args, "file://"+filepath.ToSlash(dir)+"//fleet")...)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("file:// output differs from the path's (-want +got):\n%s", d)
	}
	_, stderr := runCLI(t, 2, "diff", "file://"+filepath.ToSlash(dir)+"//fleet")
	if !strings.Contains(stderr, "has no working tree") {
		t.Errorf("working tree of a URL: stderr = %s", stderr)
	}
}

// TestDiffCIExamples checks that the CI examples run the markdown diff,
// find their comment by the marker the output starts with, and run the
// release binary, checked against its SHA256SUMS, instead of compiling it.
func TestDiffCIExamples(t *testing.T) {
	for _, name := range []string{"github-pr-diff.yaml", "gitlab-mr-diff.yml"} {
		b, err := os.ReadFile(filepath.Join("../../examples/ci", name))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, s := range []string{`propagit diff "./$FLEET_PATH"`, "-o markdown", diff.Marker,
			"/releases/download", "SHA256SUMS", "sha256sum -c", "propagit-linux-amd64"} {
			if !strings.Contains(string(b), s) {
				t.Errorf("%s does not contain %q", name, s)
			}
		}
		for _, s := range []string{"go install", "go run", "setup-go", "image: golang"} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s compiles propagit (%q) instead of using the release binary", name, s)
			}
		}
	}
}
