package guard

import (
	"strings"
)

// Allowed reports whether a commit message acknowledges a large deletion:
// its trailer block holds "Propagit-Allow-Prune: true" (key and value
// case-insensitive). Text anywhere else in the message — a merged pull
// request's body quoting the trailer, say — does not count.
func Allowed(message string) bool {
	for _, t := range trailers(message) {
		if strings.EqualFold(t.key, AllowTrailer) && strings.EqualFold(t.value, "true") {
			return true
		}
	}
	return false
}

// trailer is one "Key: value" line of a trailer block.
type trailer struct{ key, value string }

// trailers returns the trailer block of message as `git interpret-trailers`
// finds it: the last paragraph, not the subject's, when every line of it
// is a trailer or the continuation (indented) of one. A last paragraph
// holding any other line has no trailers at all: that is what keeps a
// quoted trailer in a body from counting.
func trailers(message string) []trailer {
	text := strings.TrimRight(strings.ReplaceAll(message, "\r\n", "\n"), " \t\n")
	cut := strings.LastIndex(text, "\n\n")
	if cut < 0 {
		return nil // one paragraph: the subject and its body, no trailers
	}
	var out []trailer
	for _, line := range strings.Split(text[cut+2:], "\n") {
		if line != "" && (line[0] == ' ' || line[0] == '\t') && len(out) > 0 {
			out[len(out)-1].value += " " + strings.TrimSpace(line) // continuation
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok || !isTrailerKey(key) {
			return nil
		}
		out = append(out, trailer{key: key, value: strings.TrimSpace(value)})
	}
	return out
}

// isTrailerKey reports whether key is a trailer's key: letters, digits and
// dashes, as Git allows (no space before the colon).
func isTrailerKey(key string) bool {
	if key == "" {
		return false
	}
	for _, r := range key {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// TrailerValues returns the values of key (case-insensitive) in message's
// trailer block, as Allowed reads it.
func TrailerValues(message, key string) []string {
	var out []string
	for _, t := range trailers(message) {
		if strings.EqualFold(t.key, key) {
			out = append(out, t.value)
		}
	}
	return out
}
