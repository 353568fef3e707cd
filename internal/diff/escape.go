package diff

import (
	"fmt"
	"strings"
	"unicode"
)

// Kinds, names, cluster names, file paths, messages and values come from
// the pull request being diffed. Before they reach a terminal or a
// pull-request comment they are made inert: control characters (escape
// sequences, carriage returns, bidirectional overrides) are shown as \x..
// or \u.... escapes, and Markdown punctuation outside code is
// backslash-escaped, so no heading, link, table cell or "<!--" can be
// injected.

// unsafeRune reports whether r must not reach a terminal as it is. keep
// lists the control characters allowed through (newline and tab in
// multi-line text).
func unsafeRune(r rune, keep string) bool {
	if strings.ContainsRune(keep, r) {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' || r == unicode.ReplacementChar
}

// escapeControls replaces every unsafe rune of s by a visible escape.
func escapeControls(s, keep string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unsafeRune(r, keep) }) {
		return s
	}
	var sb strings.Builder
	for _, r := range s {
		switch {
		case !unsafeRune(r, keep):
			sb.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&sb, `\x%02x`, r)
		default:
			fmt.Fprintf(&sb, `\u%04x`, r)
		}
	}
	return sb.String()
}

// terminalSafe makes multi-line text safe to print: newlines and tabs stay.
func terminalSafe(s string) string { return escapeControls(s, "\n\t") }

// oneLine makes s safe to print inside a line.
func oneLine(s string) string { return escapeControls(s, "") }

// mdSpecial are the characters that can start Markdown or HTML structure
// inside a line (emphasis, code, links, images, tags, comments, entities,
// table cells, strikethrough, headings).
const mdSpecial = "\\`*_[]<>|~&#!"

// mdText renders s as Markdown text that shows exactly s: one line, every
// character of mdSpecial backslash-escaped.
func mdText(s string) string {
	s = oneLine(s)
	var sb strings.Builder
	for _, r := range s {
		if strings.ContainsRune(mdSpecial, r) {
			sb.WriteByte('\\')
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// codeCell is code for a table cell: a pipe, even inside a code span, ends
// the cell unless escaped.
func codeCell(s string) string {
	return strings.ReplaceAll(code(s), "|", `\|`)
}
