package helm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHelmErrorQuality: a chart's mistakes come back as an *Error that
// names the template file and line an author must open, and a message
// without text/template's trace where Helm itself gives a clean one.
// Each case renders in-process and in a worker, which must agree.
func TestHelmErrorQuality(t *testing.T) {
	helpers := `{{- define "evil.name" -}}
{{ .Values.name.first }}
{{- end -}}
{{- define "evil.fail" -}}
{{ fail "evil.fail was called" }}
{{- end -}}
{{- define "evil.env" -}}
{{ env "HOME" }}
{{- end -}}
`
	cm := func(line string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n" + line + "\n"
	}
	for _, tc := range []struct {
		name     string
		template string // templates/cm.yaml
		want     Error
	}{
		{"required", cm(`  tag: {{ required "tag is required" .Values.tag }}`),
			Error{Template: "evil/templates/cm.yaml", Line: 6, Message: "tag is required"}},
		{"fail", "{{- if not .Values.ingress }}\n{{- fail \"set ingress.host: this chart serves only behind an ingress\" }}\n{{- end }}\n" + cm("  a: b"),
			Error{Template: "evil/templates/cm.yaml", Line: 2, Message: "set ingress.host: this chart serves only behind an ingress"}},
		{"parse", cm("  a: b\n  c: {{ .Values.x "),
			Error{Template: "evil/templates/cm.yaml", Line: 7, Message: "unclosed action started at evil/templates/cm.yaml:7"}},
		{"undefined-function", cm("  a: {{ nosuch .Values.x }}"),
			Error{Template: "evil/templates/cm.yaml", Line: 6, Message: `function "nosuch" not defined`}},
		{"nil-pointer", cm("  a: b\n  c: {{ .Values.a.b.c }}"),
			Error{Template: "evil/templates/cm.yaml", Line: 7, Message: "nil pointer evaluating interface {}.b"}},
		// Inside a named template, Helm names the innermost place.
		{"nil-pointer-in-helper", cm(`  name: {{ include "evil.name" . }}`),
			Error{Template: "evil/templates/_helpers.tpl", Line: 2, Message: "nil pointer evaluating interface {}.first"}},
		// fail and required report where the including template called.
		{"fail-in-helper", cm(`  name: {{ include "evil.fail" . }}`),
			Error{Template: "evil/templates/cm.yaml", Line: 6, Message: "evil.fail was called"}},
		// propagit's own sandbox: Helm has no env at all.
		{"env", cm(`  home: {{ env "HOME" }}`),
			Error{Template: "evil/templates/cm.yaml", Line: 6, Message: "env is not available in propagit's Helm renderer"}},
		// Bad indentation, the commonest chart bug: valid template, invalid YAML.
		{"invalid-yaml", cm("  a: b\n    c: d"),
			Error{Template: "evil/templates/cm.yaml", Message: "rendered YAML is invalid: error converting YAML to JSON: yaml: line 7: mapping values are not allowed in this context"}},
		// A sprig function's own error, as Helm leaves it, and one in a helper.
		{"function-error", cm(`  a: {{ mustRegexMatch "[" "x" }}`),
			Error{Template: "evil/templates/cm.yaml", Line: 6, Message: "error parsing regexp: missing closing ]: `[`"}},
		{"env-in-helper", cm(`  home: {{ include "evil.env" . }}`),
			Error{Template: "evil/templates/_helpers.tpl", Line: 8, Message: "env is not available in propagit's Helm renderer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := hostileChart(map[string]string{"templates/_helpers.tpl": helpers, "templates/cm.yaml": tc.template})
			c, err := FromFiles(files, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			rel := Release{Name: "evil", Namespace: "default"}
			want := tc.want
			want.Chart = "evil"
			_, err = Render(context.Background(), c, rel, DefaultLimits())
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Render: %v", err)
			}
			if d := cmp.Diff(&want, e); d != "" {
				t.Errorf("Render's error (-want +got):\n%s", d)
			}
			for _, noise := range []string{"template:", "executing", "HELM_ERR", "error calling", "<"} {
				if strings.Contains(e.Message, noise) {
					t.Errorf("message %q has %q", e.Message, noise)
				}
			}
			_, err = NewRenderer(DefaultLimits()).Render(c, rel)
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("the worker: %v", err)
			}
			if d := cmp.Diff(e, we); d != "" {
				t.Errorf("the worker's error differs (-in-process +worker):\n%s", d)
			}
		})
	}
}
