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
	if testing.Short() {
		t.Skip("slow: each script runs to its budget; skipped with -short")
	}
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
			want := `ResourceInterpreterCustomization.config.karmada.io/thing healthInterpretation (ric.yaml:10): the script ` + string(tc.class)
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

// TestScriptErrorMessagesAreCut raises a 1 MiB error message: the Error
// keeps at most a kilobyte of it.
func TestScriptErrorMessagesAreCut(t *testing.T) {
	_, _, err := single(t, HealthInterpretation, "function InterpretHealth(obj)\n  error(string.rep('x', 1048576))\nend").InterpretHealth(thing())
	e, ok := err.(*Error)
	if !ok || e.Class != ClassRuntime {
		t.Fatalf("error = %v, want a runtime *Error", err)
	}
	if len(e.Message) > maxMessage+16 || !strings.HasSuffix(e.Message, "(cut)") {
		t.Errorf("message of %d bytes, want it cut to %d", len(e.Message), maxMessage)
	}
}

// TestSecretsNeverReachAScript builds an Interpreter with a customization
// for v1 Secret (the loader refuses one; this is the second line) and
// asserts that no script runs on a Secret.
func TestSecretsNeverReachAScript(t *testing.T) {
	s, err := Compile("peek", HealthInterpretation, "function InterpretHealth(obj) error(obj.data.password) end", "ric.yaml", 1)
	if err != nil {
		t.Fatal(err)
	}
	in := New(calmLimits(), []Customization{{Name: "peek", APIVersion: "v1", Kind: "Secret", Scripts: []*Script{s}}})
	secret := object("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: ns}\ndata: {password: aHVudGVyMg==}\n")
	if _, script, err := in.InterpretHealth(secret); script != nil || err != nil {
		t.Errorf("InterpretHealth on a Secret ran %v: %v", script, err)
	}
	if err := CheckTarget("v1", "Secret"); err == nil {
		t.Error("CheckTarget accepts v1 Secret")
	}
}
