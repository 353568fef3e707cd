package diff

import (
	"strings"
	"testing"
)

// hostileReport carries, in every user-controlled field, the Markdown and
// terminal tricks a pull request could try.
func hostileReport() *Report {
	kind := "Kind\n# Approved\n<!--"
	name := "a|b`c\x1b[2J<!--"
	cluster := "m|1\r\n## LGTM"
	return &Report{
		Base: Revision{Name: "main"}, Head: Revision{Name: "x\x1b]0;pwned\x07"}, Differs: true,
		Clusters: []Cluster{{Name: cluster, Added: 1, Objects: []Object{{
			Ref: Ref{Group: "core", Kind: kind, Namespace: "default", Name: name}, Change: Added,
			Diff: "+data:\n+  a: \"\x1b[31mred\u202e\"\n+  b: \"```\n</details>\n<!--\"\n",
		}}}},
		Moves:     []Move{{Ref: Ref{Kind: kind, Name: name}, From: cluster, To: "m2"}},
		Deletions: []Deletion{{Ref: Ref{Kind: kind, Name: name}, Clusters: []string{cluster}}},
		Warnings:  []Warning{{Source: "a<!--.yaml:1", Template: name, Cluster: cluster, Message: "bad\n# Heading <!-- x"}},
	}
}

func TestMarkdownEscapesUserControlledText(t *testing.T) {
	md := hostileReport().Markdown(MarkdownLimit)
	if !strings.HasPrefix(md, Marker+"\n") {
		t.Errorf("the marker is not the first line:\n%s", md)
	}
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if strings.HasPrefix(line, "#") && line != "### propagit diff" {
			t.Errorf("injected heading: %q", line)
		}
		if strings.HasPrefix(line, "| ") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 6 {
			t.Errorf("table row with injected cells: %q", line)
		}
		if strings.Contains(withoutCodeSpans(line), "<!--") && line != Marker {
			t.Errorf("raw comment opener outside code: %q", line)
		}
	}
	if strings.ContainsAny(md, "\x1b\r\x07\u202e") {
		t.Errorf("control characters in markdown:\n%q", md)
	}
}

func TestTextEscapesControlCharacters(t *testing.T) {
	txt := hostileReport().Text()
	if strings.ContainsAny(txt, "\x1b\r\x07\u202e") {
		t.Errorf("control characters reach the terminal:\n%q", txt)
	}
	if !strings.Contains(txt, `\x1b[2J`) {
		t.Errorf("the escape sequence is not shown escaped:\n%s", txt)
	}
}

// withoutCodeSpans drops the code spans of a Markdown line: what is inside
// them is shown literally.
func withoutCodeSpans(line string) string {
	var sb strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			sb.WriteByte(line[i])
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		fence := strings.Repeat("`", n)
		end := strings.Index(line[i+n:], fence)
		if end < 0 {
			sb.WriteString(line[i:])
			break
		}
		i += n + end + n
	}
	return sb.String()
}
