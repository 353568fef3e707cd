package load

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInvalidYAMLAtTheOffendingLine: go-yaml v3 reports many syntax errors
// at the line where the enclosing mapping starts, lines before the mistake
// (issue #28: "invalid YAML is reported two lines early"). The problem is
// reported at the line that holds the mistake; an unclosed bracket or quote
// stays at the line that opens it. The commonest say what to do.
func TestInvalidYAMLAtTheOffendingLine(t *testing.T) {
	const head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"list item in a mapping", head + "  labels:\n    app: web\n  - tier\n",
			"a.yaml:7: invalid YAML: did not find expected key: check this line's indentation against the lines above it"},
		{"key less indented than its siblings", head + "data:\n  k: v\n b: c\n",
			"a.yaml:7: invalid YAML: did not find expected key: check this line's indentation against the lines above it"},
		{"tab indentation", head + "\tlabels: {}\n",
			"a.yaml:5: invalid YAML: found a tab character that violates indentation: indent with spaces, not tabs"},
		{"second document", "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n---\n" + head + "  labels:\n    app: web\n  - tier\n",
			"a.yaml:11: invalid YAML: did not find expected key: check this line's indentation against the lines above it"},
		{"unclosed bracket at its opening", head + "data:\n  k: [v, w\n  j: x\n",
			"a.yaml:6: invalid YAML: did not find expected ',' or ']'"},
		{"unclosed quote at its opening", head + "data:\n  k: \"v\n  j: x\n",
			"a.yaml:6: invalid YAML: found unexpected end of stream"},
		{"mapping value in a scalar", head + "data:\n  k: v: w\n",
			`a.yaml:6: invalid YAML: mapping values are not allowed in this context: quote a value that holds ": "`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, map[string]string{"a.yaml": tc.doc})
			if diff := cmp.Diff([]string{tc.want}, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
