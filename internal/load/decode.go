package load

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// decoded is what strict decoding learnt about one document: the line of
// every field written and the structural problems (unknown fields, wrong
// types).
type decoded struct {
	lines  map[string]int
	strict []issue
}

// decodeStrict checks n against out's type, then decodes it into out (a
// pointer). Decoding is lenient, so semantic checks can still run on a
// document with structural problems. Under the lenient path prefix (may be
// empty), scalars are taken as strings where strings are expected.
func decodeStrict(n *yaml.Node, out any, lenient string) decoded {
	w := newStrictWalker()
	w.lenient = lenient
	w.walk(n, reflect.TypeOf(out).Elem(), "")
	var vi []issue
	v := valueOf(n, nil, &vi, w.asString)
	if data, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(data, out) // type errors are reported by the walker
	}
	strict := w.issues
	for _, i := range vi {
		if !covered(strict, i.field) {
			strict = append(strict, i)
		}
	}
	return decoded{lines: w.lines, strict: strict}
}

// present reports whether a field was written in the YAML.
func (d decoded) present(field string) bool {
	_, ok := d.lines[field]
	return ok
}

// verdict is what becomes of one document: problems that fail the load,
// or findings, and whether the document is left out of the set.
type verdict struct {
	problems []Problem
	findings []Finding
	skip     bool
}

// judge combines the structural issues and the semantic ones. A semantic
// issue on or under a field that already has a structural issue is dropped:
// it is most likely a consequence of it. If any issue is an error, every
// issue becomes a problem; otherwise they become findings. what names the
// object in findings ("PropagationPolicy.policy.karmada.io/default/web").
func (d decoded) judge(src Source, semantic []issue, excerpt bool, what string) verdict {
	all := slices.Clone(d.strict)
	for _, i := range semantic {
		if !covered(d.strict, i.field) {
			all = append(all, i)
		}
	}
	failed := false
	for k, i := range all {
		if i.absent != "" && excerpt && !d.present(i.absent) {
			all[k].sev = sevSkip
		}
		failed = failed || all[k].sev == sevError
	}
	var v verdict
	for _, i := range all {
		p := d.problem(src, i)
		if failed {
			v.problems = append(v.problems, p)
			continue
		}
		msg := p.Message
		if p.Field != "" {
			msg = p.Field + ": " + msg
		}
		if i.sev == sevSkip {
			if i.absent != "" {
				msg += " (taken as left out of an excerpt marked with \"...\")"
			}
			v.skip = true
			msg += "; " + what + " is not loaded"
		}
		v.findings = append(v.findings, Finding{Source: p.Source, Message: msg})
	}
	return v
}

func (d decoded) problem(src Source, i issue) Problem {
	line := i.line
	for f := i.field; line == 0 && f != ""; f = parentPath(f) {
		line = d.lines[f]
	}
	if line != 0 {
		src.Line = line
	}
	return Problem{Source: src, Field: i.field, Message: i.msg}
}

// covered reports whether field is one of the issues' fields or lies under one.
func covered(issues []issue, field string) bool {
	for _, i := range issues {
		if field == i.field || (strings.HasPrefix(field, i.field) && len(field) > len(i.field) &&
			(field[len(i.field)] == '.' || field[len(i.field)] == '[')) || i.field == "" {
			return true
		}
	}
	return false
}

// parentPath strips the last segment of a field path: ".name" or "[i]".
func parentPath(f string) string {
	if strings.HasSuffix(f, "]") {
		if i := strings.LastIndex(f, "["); i >= 0 {
			return f[:i]
		}
	}
	if i := strings.LastIndexAny(f, ".["); i >= 0 {
		return f[:i]
	}
	return ""
}
