package termsafe

import (
	"bytes"
	"strings"
	"testing"
)

func TestStringEscapesControls(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, ünïcode ✓":   "plain text, ünïcode ✓",
		"\x1b]0;pwned\x07\x1b[2J": `\x1b]0;pwned\x07\x1b[2J`,
		"ok\rFAILED":              `ok\rFAILED`,
		"line\nbreak\ttab":        `line\nbreak\ttab`,
		"c1 \u009b31m csi":        `c1 \u009b31m csi`,
		"del \x7f":                `del \x7f`,
		"bidi \u202egnp.exe":      `bidi \u202egnp.exe`,
		"invalid \xff byte":       `invalid \xff byte`,
		"cut rune \xe2\x9c":       `cut rune \xe2\x9c`,
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// The writer keeps the newlines and tabs a printer lays out its lines and
// tables with, and escapes everything else a terminal would obey.
func TestWriterKeepsLayout(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	n, err := w.Write([]byte("a\tb\n\x1b]0;pwned\x07\x1b[2J\x9b\n"))
	if err != nil || n != len("a\tb\n\x1b]0;pwned\x07\x1b[2J\x9b\n") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got, want := out.String(), "a\tb\n"+`\x1b]0;pwned\x07\x1b[2J\x9b`+"\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if strings.ContainsAny(out.String(), "\x1b\x07") {
		t.Error("an escape reached the output")
	}
}
