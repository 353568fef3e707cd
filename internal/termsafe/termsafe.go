// Package termsafe makes text from members, scripts and Git safe to print
// on a terminal: a status message or object name carrying "\x1b]0;…\a" or
// "\x1b[2J" would otherwise retitle, clear or rewrite the reader's screen
// (or hide a failure behind a carriage return). Control characters (C0,
// DEL, C1), bidirectional overrides and invalid UTF-8 are shown as Go
// escapes instead; everything else passes unchanged. Machine formats (JSON,
// YAML) need none of this: their encoders escape already.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String returns s with every unsafe character escaped, newlines and tabs
// included: for one value inside a line or a table cell.
func String(s string) string {
	if clean(s, false) {
		return s
	}
	var b strings.Builder
	escape(&b, s, false)
	return b.String()
}

// Writer escapes what is written through it, keeping newlines and tabs: for
// a whole printer's output.
type Writer struct {
	w io.Writer
}

// NewWriter returns a Writer to w; a Writer is returned as is.
func NewWriter(w io.Writer) *Writer {
	if tw, ok := w.(*Writer); ok {
		return tw
	}
	return &Writer{w: w}
}

// Write writes p escaped. Each call stands alone: a rune cut across two
// calls is shown as its bytes, escaped.
func (t *Writer) Write(p []byte) (int, error) {
	s := string(p)
	if clean(s, true) {
		return t.w.Write(p)
	}
	var b strings.Builder
	escape(&b, s, true)
	if _, err := io.WriteString(t.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// unsafe reports whether r must not reach a terminal as is.
func unsafe(r rune, layout bool) bool {
	if layout && (r == '\n' || r == '\t') {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

func clean(s string, layout bool) bool {
	for _, r := range s {
		if r == utf8.RuneError || unsafe(r, layout) {
			return false
		}
	}
	return true
}

func escape(b *strings.Builder, s string, layout bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(b, `\x%02x`, s[i])
		case !unsafe(r, layout):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			fmt.Fprintf(b, `\x%02x`, r)
		default:
			fmt.Fprintf(b, `\u%04x`, r)
		}
		i += size
	}
}
