package diff

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// contextLines is the number of unchanged lines around each hunk.
const contextLines = 3

// manifestDiff is the unified diff between two manifests (either may be
// nil). Secrets are redacted first and their YAML rendered again.
func manifestDiff(a, b *unstructured.Unstructured, aYAML, bYAML []byte, from, to string) string {
	secret := isSecret(a) || isSecret(b)
	if secret {
		ra, rb := redactPair(a, b)
		aYAML, bYAML = nil, nil
		if ra != nil {
			aYAML = manifest(ra)
		}
		if rb != nil {
			bYAML = manifest(rb)
		}
	}
	text := unified(lines(aYAML), lines(bYAML), from, to)
	if secret {
		text = untoken(text)
	}
	return text
}

// lines splits text into lines that each end with a newline.
func lines(text []byte) []string {
	if len(text) == 0 {
		return nil
	}
	s := string(text)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	out := strings.SplitAfter(s, "\n")
	return out[:len(out)-1]
}

// unified formats difflib's grouped opcodes as a unified diff. Automatic
// junk detection is off so that repeated YAML lines ("- name: http") never
// make a hunk larger than it is.
func unified(a, b []string, from, to string) string {
	m := difflib.NewMatcherWithJunk(a, b, false, nil)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", from, to)
	for _, g := range m.GetGroupedOpCodes(contextLines) {
		first, last := g[0], g[len(g)-1]
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(first.I1, last.I2), hunkRange(first.J1, last.J2))
		for _, c := range g {
			if c.Tag == 'e' {
				writeLines(&sb, " ", a[c.I1:c.I2])
				continue
			}
			if c.Tag == 'r' || c.Tag == 'd' {
				writeLines(&sb, "-", a[c.I1:c.I2])
			}
			if c.Tag == 'r' || c.Tag == 'i' {
				writeLines(&sb, "+", b[c.J1:c.J2])
			}
		}
	}
	return sb.String()
}

func writeLines(sb *strings.Builder, prefix string, ls []string) {
	for _, l := range ls {
		sb.WriteString(prefix)
		sb.WriteString(l)
	}
}

// hunkRange renders a hunk's line range the way GNU diff does: "start,len",
// "start" when one line long, and "start-1,0" when empty.
func hunkRange(start, stop int) string {
	begin := start + 1
	length := stop - start
	switch length {
	case 1:
		return fmt.Sprintf("%d", begin)
	case 0:
		begin--
	}
	return fmt.Sprintf("%d,%d", begin, length)
}
