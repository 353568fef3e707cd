package apply

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func yamlMap(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCheckRetainedAllowsOnlyTheMembersValues: a retention result may mix
// desired and live values path by path and leave out what the member does
// not have; anything else — identity, kind, propagit's keys, a value of
// its own, a dropped field the member has — is named by path.
func TestCheckRetainedAllowsOnlyTheMembersValues(t *testing.T) {
	desired := `apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: ns
  labels: {propagit.io/managed: "true", app: web}
  annotations: {propagit.io/applied-digest: abc}
data: {a: "1", b: "2"}
list: [{x: 1}, {x: 2}]
`
	live := `apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: ns
  uid: u-1
  labels: {propagit.io/managed: "true", app: web, team: member}
  annotations: {propagit.io/applied-digest: old, note: member}
data: {a: "live", c: "3"}
list: [{x: 1}, {x: 9, y: 8}]
`
	for name, tc := range map[string]struct {
		result string
		want   string // "" when allowed, else a part of the error
	}{
		"desired as it is": {desired, ""},
		"live values mixed in": {strings.NewReplacer(`a: "1"`, `a: "live", c: "3"`, "{x: 2}", "{x: 2, y: 8}",
			"app: web}", "app: web, team: member}").Replace(desired), ""},
		"a field the member lacks left out": {strings.Replace(desired, `, b: "2"`, "", 1), ""},
		"kind":                              {strings.Replace(desired, "kind: ConfigMap", "kind: Pod", 1), "changed kind"},
		"apiVersion":                        {strings.Replace(desired, "apiVersion: v1", "apiVersion: v2", 1), "changed apiVersion"},
		"name":                              {strings.Replace(desired, "name: c", "name: d", 1), "changed metadata.name"},
		"namespace":                         {strings.Replace(desired, "namespace: ns", "namespace: kube-system", 1), "changed metadata.namespace"},
		"live uid":                          {strings.Replace(desired, "namespace: ns", "namespace: ns\n  uid: u-1", 1), "changed metadata.uid"},
		"digest from live":                  {strings.Replace(desired, "applied-digest: abc", "applied-digest: old", 1), "metadata.annotations[\"propagit.io/applied-digest\"]"},
		"managed label dropped":             {strings.Replace(desired, `propagit.io/managed: "true", `, "", 1), "propagit owns"},
		"a value of its own":                {strings.Replace(desired, `b: "2"`, `b: "evil"`, 1), "changed data.b"},
		"a new field":                       {strings.Replace(desired, "\ndata:", "\nspec: {hostPID: true}\ndata:", 1), "changed spec"},
		"a field the member has dropped":    {strings.Replace(desired, `a: "1", `, "", 1), "changed data.a"},
		"a list element of its own":         {strings.Replace(desired, "{x: 2}", "{x: 3}", 1), "changed list[1].x"},
		"an empty mapping for a value":      {strings.Replace(desired, `b: "2"`, `b: {}`, 1), "changed data.b"},
	} {
		t.Run(name, func(t *testing.T) {
			err := checkRetained(yamlMap(t, desired), yamlMap(t, live), yamlMap(t, tc.result))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("allowed, want an error naming %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q does not name %q", err, tc.want)
			}
		})
	}
}
