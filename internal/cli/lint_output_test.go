package cli

import (
	"encoding/json"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLintOverridePathAtThePolicy: an overrider whose path the template
// does not have is one error at the overrider's line in the
// OverridePolicy, in words (no json-patch text), naming every cluster it
// fails on; the template's file has no finding and the policy is not also
// reported as changing nothing.
func TestLintOverridePathAtThePolicy(t *testing.T) {
	files := maps.Clone(newcomerFleet)
	files["override.yaml"] = `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: replicas, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  overrideRules:
  - overriders:
      plaintext:
      - {path: /metadata/labels/app, operator: replace, value: web}
      - path: /spec/template/spec/containers/0/imag
        operator: replace
        value: nginx:1.28
`
	dir := t.TempDir()
	writeFleet(t, dir, files)
	stdout, _ := runCLI(t, 1, "lint", "--source", dir)
	want := "override.yaml:11: error: OverridePolicy.policy.karmada.io/demo/replicas: overrideRules[0].overriders.plaintext[1].path /spec/template/spec/containers/0/imag: " +
		"Deployment.apps/demo/nginx has no field spec.template.spec.containers[0].imag; did you mean spec.template.spec.containers[0].image? " +
		"(the override fails on clusters member1, member2, which keep their current objects)\n" +
		"1 finding (1 error, 0 warnings, 0 info)\n"
	if stdout != want {
		t.Errorf("got:\n%s\nwant:\n%s", stdout, want)
	}
}

// lintRecords runs lint -o json on the silent fleet.
func lintRecords(t *testing.T) []map[string]any {
	t.Helper()
	dir := t.TempDir()
	writeFleet(t, dir, silentFleet)
	stdout, _ := runCLI(t, 1, "lint", "--source", dir, "-o", "json")
	var recs []map[string]any
	if err := json.Unmarshal([]byte(stdout), &recs); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	return recs
}

// TestLintJSON: -o json is an array of {file, line, severity, rule,
// message}, the same findings as the text, and the exit code is the
// text's.
func TestLintJSON(t *testing.T) {
	recs := lintRecords(t)
	if len(recs) != len(silentFindings)+1 {
		t.Fatalf("%d records, want %d: %v", len(recs), len(silentFindings)+1, recs)
	}
	for _, r := range recs {
		if keys := slices.Sorted(maps.Keys(r)); !slices.Equal(keys, []string{"file", "line", "message", "rule", "severity"}) {
			t.Errorf("record fields %v", keys)
		}
	}
	want := map[string]any{"file": "policy.yaml", "line": 11.0, "severity": "warning", "rule": "unknown-cluster",
		"message": `PropagationPolicy.policy.karmada.io/demo/nginx: placement.clusterAffinity.clusterNames names cluster "membr2", which no Cluster declares; did you mean "member2"?`}
	if !slices.ContainsFunc(recs, func(r map[string]any) bool { return maps.Equal(r, want) }) {
		t.Errorf("no record %v in %v", want, recs)
	}
	rules := map[string]bool{}
	for _, r := range recs {
		rules[r["rule"].(string)] = true
	}
	for _, rule := range []string{"unknown-field", "unselected-template", "override-unused", "selects-nothing", "undeclared-namespace"} {
		if !rules[rule] {
			t.Errorf("no finding of rule %s", rule)
		}
	}
	dir := t.TempDir()
	writeFleet(t, dir, newcomerFleet)
	if stdout, _ := runCLI(t, 0, "lint", "--source", dir, "-o", "json"); stdout != "[]\n" {
		t.Errorf("no findings: got %q, want []", stdout)
	}
	runCLI(t, 2, "lint", "--source", dir, "-o", "yaml")
}

// TestLintSARIF validates -o sarif against what SARIF 2.1.0's schema
// requires of the properties it writes, and what GitHub code scanning
// needs to place a result: a non-empty relative uri and a start line.
func TestLintSARIF(t *testing.T) {
	dir := t.TempDir()
	writeFleet(t, dir, silentFleet)
	stdout, _ := runCLI(t, 1, "lint", "--source", dir, "-o", "sarif")
	var log map[string]any
	if err := json.Unmarshal([]byte(stdout), &log); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	results := checkSARIF(t, log)
	if len(results) != len(silentFindings)+1 {
		t.Errorf("%d results, want %d", len(results), len(silentFindings)+1)
	}
	const want = "policy.yaml:11 warning unknown-cluster"
	if !slices.Contains(results, want) {
		t.Errorf("no result %q in %q", want, results)
	}
	run := log["runs"].([]any)[0].(map[string]any)
	base := run["originalUriBaseIds"].(map[string]any)["SRCROOT"].(map[string]any)["uri"].(string)
	if u, err := url.Parse(base); err != nil || u.Scheme != "file" || !strings.HasSuffix(u.Path, "/") || filepath.Clean(u.Path) != filepath.ToSlash(dir) {
		t.Errorf("SRCROOT %q, want the file URI of %s with a trailing slash", base, dir)
	}
}

// checkSARIF checks the properties SARIF 2.1.0's schema requires (and the
// types and values it allows) of a log, and returns each result as
// "uri:line level rule".
func checkSARIF(t *testing.T, log map[string]any) []string {
	t.Helper()
	str := func(m map[string]any, key, where string) string {
		s, ok := m[key].(string)
		if !ok || s == "" {
			t.Fatalf("%s.%s: want a non-empty string, got %v", where, key, m[key])
		}
		return s
	}
	obj := func(v any, where string) map[string]any {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: want an object, got %v", where, v)
		}
		return m
	}
	arr := func(v any, where string) []any {
		a, ok := v.([]any)
		if !ok {
			t.Fatalf("%s: want an array, got %v", where, v)
		}
		return a
	}
	if v := str(log, "version", "log"); v != "2.1.0" {
		t.Errorf("version %q", v)
	}
	str(log, "$schema", "log")
	runs := arr(log["runs"], "runs")
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	run := obj(runs[0], "runs[0]")
	driver := obj(obj(run["tool"], "tool")["driver"], "tool.driver")
	if name := str(driver, "name", "driver"); name != "propagit" {
		t.Errorf("driver name %q", name)
	}
	var ids []string
	for i, r := range arr(driver["rules"], "driver.rules") {
		rule := obj(r, "rule")
		ids = append(ids, str(rule, "id", "rules"))
		str(obj(rule["shortDescription"], "shortDescription"), "text", "shortDescription")
		if i > 0 && slices.Contains(ids[:i], ids[i]) {
			t.Errorf("rule %s listed twice", ids[i])
		}
	}
	var out []string
	for i, r := range arr(run["results"], "results") {
		res := obj(r, "result")
		str(obj(res["message"], "message"), "text", "message")
		id := str(res, "ruleId", "result")
		if idx, ok := res["ruleIndex"].(float64); !ok || int(idx) >= len(ids) || ids[int(idx)] != id {
			t.Errorf("result %d: ruleIndex %v does not point at rule %s", i, res["ruleIndex"], id)
		}
		level := str(res, "level", "result")
		if !slices.Contains([]string{"none", "note", "warning", "error"}, level) {
			t.Errorf("result %d: level %q", i, level)
		}
		locs := arr(res["locations"], "locations")
		if len(locs) != 1 {
			t.Fatalf("result %d: %d locations", i, len(locs))
		}
		pl := obj(obj(locs[0], "location")["physicalLocation"], "physicalLocation")
		al := obj(pl["artifactLocation"], "artifactLocation")
		uri := str(al, "uri", "artifactLocation")
		if u, err := url.Parse(uri); err != nil || u.IsAbs() || strings.HasPrefix(uri, "/") {
			t.Errorf("result %d: uri %q is not relative", i, uri)
		}
		if str(al, "uriBaseId", "artifactLocation") != "SRCROOT" {
			t.Errorf("result %d: uriBaseId", i)
		}
		line, ok := obj(pl["region"], "region")["startLine"].(float64)
		if !ok || line < 1 {
			t.Errorf("result %d: startLine %v", i, line)
		}
		out = append(out, uri+":"+strconv.Itoa(int(line))+" "+level+" "+id)
	}
	return out
}
