package load

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propagit/propagit/internal/interpret"
)

const rolloutRIC = `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: argo-rollout
spec:
  target:
    apiVersion: argoproj.io/v1alpha1
    kind: Rollout
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(obj)
          return obj.spec.replicas, nil
        end
    replicaRevision:
      luaScript: >
        function ReviseReplica(obj, n) obj.spec.replicas = n return obj end
    dependencyInterpretation:
      luaScript: "function GetDependencies(obj) return {} end"
`

func TestCustomizationLoadsWithScriptsAtTheirLines(t *testing.T) {
	set := mustLoad(t, map[string]string{"ric.yaml": rolloutRIC})
	if len(set.Customizations) != 1 || len(set.Templates) != 0 || len(set.Findings) != 0 {
		t.Fatalf("customizations %d, templates %d, findings %v; want the customization only", len(set.Customizations), len(set.Templates), set.Findings)
	}
	c := set.Customizations[0].Compiled
	if c.Name != "argo-rollout" || c.APIVersion != "argoproj.io/v1alpha1" || c.Kind != "Rollout" {
		t.Errorf("compiled = %+v", c)
	}
	var got []string
	for _, s := range c.Scripts {
		got = append(got, string(s.Operation)+" "+s.Location())
	}
	want := []string{"replicaResource ric.yaml:12", "replicaRevision ric.yaml:17", "dependencyInterpretation ric.yaml:19"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("scripts (-want +got):\n%s", d)
	}
}

func TestCustomizationProblems(t *testing.T) {
	ric := func(spec string) string {
		return "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\nmetadata: {name: r}\nspec:\n" + spec
	}
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"target required", map[string]string{"r.yaml": ric("  customizations:\n    healthInterpretation:\n      luaScript: 'function InterpretHealth(o) return true end'\n")},
			[]string{"r.yaml:4: spec.target.apiVersion: required", "r.yaml:4: spec.target.kind: required"}},
		{"at least one customization", map[string]string{"r.yaml": ric("  target: {apiVersion: example.io/v1, kind: Thing}\n  customizations: {}\n")},
			[]string{"r.yaml:6: spec.customizations: required: at least one customization"}},
		{"syntax error at its line in the file", map[string]string{"r.yaml": ric("  target: {apiVersion: example.io/v1, kind: Thing}\n  customizations:\n" +
			"    healthInterpretation:\n      luaScript: |\n        function InterpretHealth(o)\n          return o.status.ready ==\n        end\n")},
			[]string{"r.yaml:11: spec.customizations.healthInterpretation.luaScript: syntax error"}},
		{"function not defined", map[string]string{"r.yaml": ric("  target: {apiVersion: example.io/v1, kind: Thing}\n  customizations:\n" +
			"    healthInterpretation:\n      luaScript: |\n        function Health(o) return true end\n")},
			[]string{"r.yaml:9: spec.customizations.healthInterpretation.luaScript: the script does not define function InterpretHealth"}},
		{"two customizations script one operation", map[string]string{
			"a.yaml": strings.Replace(rolloutRIC, "argo-rollout", "a", 1),
			"b.yaml": strings.Replace(rolloutRIC, "argo-rollout", "b", 1)},
			[]string{`b.yaml:12: spec.customizations.replicaResource: conflicts with ResourceInterpreterCustomization.config.karmada.io/a at a.yaml:1`,
				`b.yaml:17: spec.customizations.replicaRevision: conflicts with ResourceInterpreterCustomization.config.karmada.io/a at a.yaml:1`}},
		{"Secrets are refused as a target", map[string]string{"r.yaml": ric("  target: {apiVersion: v1, kind: Secret}\n  customizations:\n" +
			"    healthInterpretation:\n      luaScript: 'function InterpretHealth(o) return true end'\n")},
			[]string{"r.yaml:5: spec.target.kind: scripts may not target v1 Secret: they would see its decrypted values"}},
		{"a chunk that blows its budget at load", map[string]string{"r.yaml": ric("  target: {apiVersion: example.io/v1, kind: Thing}\n  customizations:\n" +
			"    healthInterpretation:\n      luaScript: |\n        local t = {'x'}\n        for i = 1, 60 do t = {t, t} end\n        " +
			"local s = string.rep('a', 5000):find(('.-'):rep(8) .. 'b')\n        function InterpretHealth(o) return true end\n")},
			[]string{"r.yaml:9: spec.customizations.healthInterpretation.luaScript: stopped:"}},
		{"unknown field", map[string]string{"r.yaml": ric("  target: {apiVersion: example.io/v1, kind: Thing}\n  customizations:\n    healthInterpretation:\n      lua: x\n")},
			[]string{"r.yaml:7: spec.customizations.healthInterpretation.luaScript: required",
				"r.yaml:8: spec.customizations.healthInterpretation.lua: unknown field"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, tc.files)
			if len(got) != len(tc.want) {
				t.Fatalf("problems:\n%s\nwant %d", strings.Join(got, "\n"), len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("problem %d = %q, want it to start with %q", i, got[i], w)
				}
			}
		})
	}
}

func TestCustomizationComponentResourceIsIgnoredWithAFinding(t *testing.T) {
	set := mustLoad(t, map[string]string{"r.yaml": strings.Replace(rolloutRIC, "    dependencyInterpretation:",
		"    componentResource:\n      luaScript: 'function GetComponents(o) return {} end'\n    dependencyInterpretation:", 1)})
	if len(set.Findings) != 1 || !strings.Contains(set.Findings[0].Message, "componentResource: not supported") {
		t.Fatalf("findings = %v", set.Findings)
	}
	for _, s := range set.Customizations[0].Compiled.Scripts {
		if s.Operation == interpret.Operation("componentResource") {
			t.Error("componentResource was compiled")
		}
	}
}
