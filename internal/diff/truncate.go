package diff

import (
	"fmt"
	"strings"
)

// section is one collapsible block of the markdown output: a fixed summary
// and closing, and items (object diffs) that may be cut from the end.
type section struct {
	summary string
	close   string
	items   []string
	labels  []string
}

func (s section) size() int {
	n := 0
	for _, it := range s.items {
		n += len(it)
	}
	return n
}

// truncatedFooter ends a comment some of whose sections were cut.
const truncatedFooter = "> [!NOTE]\n> This comment was truncated to stay under GitHub's 65,536-character limit: the largest sections lost their last diffs (each cut is noted where it happened). Run `propagit diff` locally for the full output.\n"

// fit joins head and sections within limit bytes. When everything does not
// fit, it finds the largest per-section allowance such that the sections,
// each cut to the allowance, fit ("water-filling"): small sections stay
// whole and the largest lose their last items. If even the fixed parts do
// not fit, the text is cut at a line and its open blocks closed.
func fit(head string, sections []section, limit int) string {
	full := assemble(head, sections, -1)
	if len(full) <= limit {
		return full
	}
	fixed := len(head) + len(truncatedFooter)
	for _, s := range sections {
		fixed += len(s.summary) + len("</summary>\n\n") + len(s.close)
	}
	budget := limit - fixed
	for attempt := 0; attempt < 16 && budget >= 0; attempt++ {
		out := assemble(head, sections, allowance(sections, budget)) + truncatedFooter
		if len(out) <= limit {
			return out
		}
		budget -= len(out) - limit + 256
	}
	return hardCut(assemble(head, sections, 0)+truncatedFooter, limit)
}

// allowance is the largest per-section item size c such that the sections,
// each holding at most c bytes of items, hold at most budget bytes.
func allowance(sections []section, budget int) int {
	lo, hi := 0, 0
	for _, s := range sections {
		hi = max(hi, s.size())
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		total := 0
		for _, s := range sections {
			total += min(s.size(), mid)
		}
		if total <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// assemble joins the parts, each section keeping the items that fit in
// allow bytes (all of them when allow < 0) and noting the rest.
func assemble(head string, sections []section, allow int) string {
	var sb strings.Builder
	sb.WriteString(head)
	for _, s := range sections {
		kept, used := 0, 0
		for _, it := range s.items {
			if allow >= 0 && used+len(it) > allow {
				break
			}
			used += len(it)
			kept++
		}
		sb.WriteString(s.summary)
		if kept < len(s.items) {
			sb.WriteString(" (truncated)")
		}
		sb.WriteString("</summary>\n\n")
		for _, it := range s.items[:kept] {
			sb.WriteString(it)
		}
		if kept < len(s.items) {
			sb.WriteString(cutNote(s, kept, s.size()-used))
		}
		sb.WriteString(s.close)
	}
	return sb.String()
}

// cutNote states what was cut from a section.
func cutNote(s section, kept, chars int) string {
	cut := len(s.items) - kept
	return fmt.Sprintf("> [!WARNING]\n> %s of %d cut here (%s characters) to fit GitHub's comment limit: %s.\n\n",
		plural(cut, "object diff"), len(s.items), thousands(chars), listNames(s.labels[kept:], 5, code))
}

// hardCut cuts text at the last line that leaves room for a note, then
// closes the <details> block left open (sections never nest).
func hardCut(text string, limit int) string {
	const note = "\n> [!WARNING]\n> Cut here: the summary alone exceeds GitHub's comment limit. Run `propagit diff` locally for the full output.\n"
	const closeTag = "</details>\n"
	cut := text[:max(0, min(limit-len(note)-len(closeTag), len(text)))]
	if i := strings.LastIndex(cut, "\n"); i >= 0 {
		cut = cut[:i+1]
	}
	if strings.Count(cut, "<details>") > strings.Count(cut, "</details>") {
		cut += closeTag
	}
	return cut + note
}

// thousands renders 12345 as "12,345".
func thousands(n int) string {
	s := fmt.Sprintf("%d", n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
