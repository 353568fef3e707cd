package interpret

import (
	"strings"
	"testing"
)

// TestRedactedCarriesNothingTheScriptSaw runs scripts on an object holding
// a value they must not leak, each failing its own way (raising the value,
// faking the line number with it, returning it in a bad shape, blowing
// the budget), and asserts that Redacted names the customization,
// operation, file, the script's first line and the class, and holds
// neither the value nor the faked line, while Error still has the detail.
func TestRedactedCarriesNothingTheScriptSaw(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		class     ErrorClass
	}{
		{"raises the value", "function InterpretHealth(obj)\n  error('password=' .. obj.data.password)\nend", ClassRuntime},
		{"fakes a line with it", "function InterpretHealth(obj)\n  error('luaScript:' .. #obj.data.password .. '4242: ' .. obj.data.password, 0)\nend", ClassRuntime},
		{"returns it", "function InterpretHealth(obj)\n  return obj.data.password\nend", ClassResult},
		{"blows the budget", "function InterpretHealth(obj)\n  local s = obj.data.password\n  while true do s = s .. s end\nend", ClassBudget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := object("apiVersion: example.io/v1\nkind: Thing\nmetadata: {name: t}\ndata: {password: hunter2-s3cr3t}\n")
			_, _, err := single(t, HealthInterpretation, tc.src).InterpretHealth(obj)
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("error = %v, want an *Error", err)
			}
			got := e.Redacted()
			want := `ResourceInterpreterCustomization "thing" healthInterpretation (ric.yaml:10): the script ` + string(tc.class)
			if !strings.HasPrefix(got, want) {
				t.Errorf("Redacted() = %q, want it to start with %q", got, want)
			}
			for _, leak := range []string{"hunter2", "s3cr3t", "4242"} {
				if strings.Contains(got, leak) {
					t.Errorf("Redacted() = %q holds %q", got, leak)
				}
			}
			if tc.class == ClassRuntime && !strings.Contains(e.Error(), "hunter2") {
				t.Errorf("Error() = %q, want the detail kept for render-time use", e.Error())
			}
			t.Logf("%s\n%s", e.Error(), got)
		})
	}
}
