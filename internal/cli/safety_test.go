package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"

	"github.com/propagit/propagit/internal/diff"
)

// fleetWebTypo is an override whose plaintext path does not exist in
// Deployment demo/web: it fails for member2.
const fleetWebTypo = `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata:
  name: web-typo
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
      plaintext:
      - path: /spec/strategy/rollingUpdate/maxSurge
        operator: replace
        value: 2
`

// safetyRepo extends the diff tests' history (tag secret-changed) with the
// commits issue 13 is about: an override typo that also changes the image,
// the deletion of the only policy of demo/web, a policy that preserves its
// resources on deletion, and the deletion of the template it preserves.
func safetyRepo(t *testing.T) string {
	t.Helper()
	dir := fleetRepo(t)
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := &committer{t: t, dir: dir, repo: repo, n: 20}
	newImage := strings.Replace(fleetWeb, "web:1.4.0", "web:1.5.0", 1)
	c.commit("override-typo", map[string]string{
		"fleet/policies/web-typo.yaml":   fleetWebTypo,
		"fleet/apps/web/deployment.yaml": newImage,
	})
	c.commit("policy-deleted", map[string]string{
		"fleet/policies/web-typo.yaml": "",
		"fleet/policies/web.yaml":      "",
	})
	preserving := strings.Replace(sprintf(fleetWebPolicy, 2), "  placement:\n", "  preserveResourcesOnDeletion: true\n  placement:\n", 1)
	c.commit("preserve", map[string]string{"fleet/policies/web.yaml": preserving})
	c.commit("preserved-template-deleted", map[string]string{"fleet/apps/web/deployment.yaml": ""})
	return dir
}

var safetyScenarios = []struct{ name, base, head string }{
	{"override-typo", "secret-changed", "override-typo"},
	{"policy-deleted", "secret-changed", "policy-deleted"},
	{"preserved-template-deleted", "preserve", "preserved-template-deleted"},
}

// TestDiffCommitSafetyGolden pins the diff of each issue-13 commit in every
// format: an override typo is a render error that keeps the cluster's
// objects (exit 2), a deleted policy leaves its templates unclaimed, a
// deleted template whose policy preserves it is kept, not deleted.
func TestDiffCommitSafetyGolden(t *testing.T) {
	dir := safetyRepo(t)
	for _, sc := range safetyScenarios {
		code := 0
		if sc.name == "override-typo" {
			code = 2
		}
		for format, ext := range diffFormats {
			t.Run(sc.name+"/"+format, func(t *testing.T) {
				out, _ := runCLI(t, code, "diff", filepath.Join(dir, "fleet"), "--base", sc.base, "--head", sc.head, "-o", format)
				golden(t, "diff/"+sc.name+"."+ext, out)
			})
		}
	}
}

// TestDiffOverrideTypoIsNoDeletion checks that an override typo is
// reported as a render error, keeps member2's Deployment and exits 2.
func TestDiffOverrideTypoIsNoDeletion(t *testing.T) {
	dir := safetyRepo(t)
	out, stderr := runCLI(t, 2, "diff", filepath.Join(dir, "fleet"), "--base", "secret-changed", "--head", "override-typo", "-o", "json")
	var r diff.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Deletions) != 0 || len(r.Moves) != 0 {
		t.Errorf("an override typo deletes or moves: %+v %+v", r.Deletions, r.Moves)
	}
	if len(r.RenderErrors) != 1 || r.RenderErrors[0].Cluster != "member2" || !r.RenderErrors[0].Kept ||
		r.RenderErrors[0].Policy != "OverridePolicy.policy.karmada.io/demo/web-typo" || r.RenderErrors[0].Template != "Deployment.apps/demo/web" {
		t.Errorf("render errors: %+v", r.RenderErrors)
	}
	for _, c := range r.Clusters {
		if c.Name == "member2" {
			t.Errorf("member2 changes, want it to keep its objects: %+v", c)
		}
		if c.Removed != 0 {
			t.Errorf("%s: %d removed", c.Name, c.Removed)
		}
	}
	if !strings.Contains(stderr, "head: 1 render error: a template fails to render for a cluster") {
		t.Errorf("stderr does not say what failed: %s", stderr)
	}
	text, _ := runCLI(t, 2, "diff", filepath.Join(dir, "fleet"), "--base", "secret-changed", "--head", "override-typo")
	if !strings.Contains(text, "Deployment.apps/demo/web on member2: "+diff.RenderErrorText+": OverridePolicy.policy.karmada.io/demo/web-typo rule 0 ") ||
		strings.Contains(text, "deletes") {
		t.Errorf("text output:\n%s", text)
	}
}

// TestRenderAndLintFailOnOverrideTypo puts demo/web (the Deployment and
// its Service) back and the typo in
// the working tree:
// render writes everything else and exits 1, lint exits 1 (error), diff of
// the working tree exits 2.
func TestRenderAndLintFailOnOverrideTypo(t *testing.T) {
	dir := safetyRepo(t)
	fleet := filepath.Join(dir, "fleet")
	writeFile(t, filepath.Join(fleet, "apps/web/deployment.yaml"), fleetWeb)     // deleted by the last commit
	writeFile(t, filepath.Join(fleet, "apps/web/service.yaml"), fleetWebService) // its policy selects it
	runCLI(t, 0, "render", "--source", fleet, "--out", filepath.Join(t.TempDir(), "ok"))
	runCLI(t, 0, "lint", "--source", fleet)
	writeFile(t, filepath.Join(fleet, "policies/web-typo.yaml"), fleetWebTypo)
	out := filepath.Join(t.TempDir(), "rendered")
	_, stderr := runCLI(t, 1, "render", "--source", fleet, "--out", out)
	if !strings.Contains(stderr, "error: apps/web/deployment.yaml:1: Deployment.apps/demo/web on member2: OverridePolicy.policy.karmada.io/demo/web-typo rule 0 overrideRules[0].overriders.plaintext: ") {
		t.Errorf("render stderr does not name the failure:\n%s", stderr)
	}
	files := readTree(t, out)
	if _, ok := files["member1/demo/deployment.apps_web.yaml"]; !ok {
		t.Errorf("render did not write what rendered: %v", files)
	}
	if _, ok := files["member2/demo/secret.core_db.yaml"]; !ok {
		t.Errorf("render did not write member2's other objects: %v", files)
	}
	runCLI(t, 1, "render", "--source", fleet, "--out", "-")
	stdout, _ := runCLI(t, 1, "lint", "--source", fleet)
	if !strings.Contains(stdout, "policies/web-typo.yaml:16: error: OverridePolicy.policy.karmada.io/demo/web-typo: overrideRules[0].overriders.plaintext[0].path ") {
		t.Errorf("lint output:\n%s", stdout)
	}
	runCLI(t, 0, "lint", "--source", fleet, "--fail-on", "none")
	runCLI(t, 2, "lint", "--source", fleet, "--fail-on", "fatal")
	runCLI(t, 2, "diff", filepath.Join(dir, "fleet"))
}

// TestDiffDeletedPolicyLeavesTemplatesUnclaimed deletes the only policy of
// demo/web: no deletion, the templates are unclaimed, exit 0.
func TestDiffDeletedPolicyLeavesTemplatesUnclaimed(t *testing.T) {
	dir := safetyRepo(t)
	out, _ := runCLI(t, 0, "diff", filepath.Join(dir, "fleet"), "--base", "secret-changed", "--head", "policy-deleted", "--exit-code")
	if !strings.Contains(out, "Deployment.apps/demo/web: unclaimed: no policy selects it; it keeps running where it was (member1, member2)") ||
		strings.Contains(out, "deletes") {
		t.Errorf("output:\n%s", out)
	}
}

// TestDiffTemplateDeletion: deleting a template deletes its objects, unless
// its policy preserves them; then they are kept, no longer managed.
func TestDiffTemplateDeletion(t *testing.T) {
	dir := safetyRepo(t)
	out, _ := runCLI(t, 0, "diff", filepath.Join(dir, "fleet"), "--base", "new-cluster", "--head", "template-deleted")
	if !strings.Contains(out, "This change deletes Service/demo/web from 2 clusters") {
		t.Errorf("deleting a template: want a deletion:\n%s", out)
	}
	out, _ = runCLI(t, 1, "diff", filepath.Join(dir, "fleet"), "--base", "preserve", "--head", "preserved-template-deleted", "--exit-code")
	if strings.Contains(out, "deletes") || !strings.Contains(out, "Deployment.apps/demo/web stays on member1, member2 (preserveResourcesOnDeletion)") {
		t.Errorf("deleting a preserved template:\n%s", out)
	}
}

// TestExplainUnclaimed renders the fleet, deletes the policy of demo/web
// and explains it with the render as history: unclaimed, kept on both
// clusters.
func TestExplainUnclaimed(t *testing.T) {
	dir := safetyRepo(t)
	fleet := filepath.Join(dir, "fleet")
	writeFile(t, filepath.Join(fleet, "apps/web/deployment.yaml"), fleetWeb)
	prev := filepath.Join(t.TempDir(), "rendered")
	runCLI(t, 0, "render", "--source", fleet, "--out", prev)
	if err := os.Remove(filepath.Join(fleet, "policies/web.yaml")); err != nil {
		t.Fatal(err)
	}
	out, _ := runCLI(t, 0, "explain", "deployment/web", "-n", "demo", "--source", fleet, "--previous", prev)
	for _, s := range []string{
		"  unclaimed: no policy selects it; it keeps running where it was\n",
		"  member1  replicas 2  (unclaimed: kept as last recorded)\n",
		"  member2  replicas 4  (unclaimed: kept as last recorded)\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("explain lacks %q:\n%s", s, out)
		}
	}
	_, stderr := runCLI(t, 0, "render", "--source", fleet, "--out", "-", "--previous", prev)
	if !strings.Contains(stderr, "Deployment.apps/demo/web: unclaimed: no policy selects it") {
		t.Errorf("render does not say the template is unclaimed:\n%s", stderr)
	}
}
