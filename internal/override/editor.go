package override

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/load"
)

// Overrider field names, as they appear in a policy and in Change.Overrider.
const (
	overriderImage       = "imageOverrider"
	overriderCommand     = "commandOverrider"
	overriderArgs        = "argsOverrider"
	overriderLabels      = "labelsOverrider"
	overriderAnnotations = "annotationsOverrider"
	overriderField       = "fieldOverrider"
	overriderPlaintext   = "plaintext"
)

// editor applies rules to one object and records every edit.
type editor struct {
	obj   *unstructured.Unstructured
	edits []edit

	// The rule being applied, stamped on each edit.
	policy string
	source load.Source
	rule   int
}

// edit is a Change plus what Writes needs.
type edit struct {
	Change
	subPaths []string // fieldOverrider: the sub-paths patched inside Path
	source   load.Source
}

// step is one overrider item of a rule. Plaintext is one step for all its
// entries, because Karmada applies them as a single patch.
type step struct {
	overrider string
	field     string
	run       func() error
}

// applyRule applies one rule's overriders in Karmada's fixed order: image,
// command, args, labels, annotations, field, plaintext.
func (e *editor) applyRule(p load.Override, r rule) error {
	e.policy, e.source, e.rule = p.Display(), p.Source, r.index
	for _, s := range steps(e, r.overriders) {
		if err := s.run(); err != nil {
			return &RuleError{
				Policy: e.policy,
				Source: e.source,
				Rule:   r.index,
				Field:  r.field + "." + s.field,
				Err:    err,
			}
		}
	}
	return nil
}

// steps lists the overrider items of ov in the order they apply.
func steps(e *editor, ov policyv1alpha1.Overriders) []step {
	var out []step
	add := func(overrider string, n int, run func(i int) error) {
		for i := range n {
			out = append(out, step{
				overrider: overrider,
				field:     fmt.Sprintf("%s[%d]", overrider, i),
				run:       func() error { return run(i) },
			})
		}
	}
	add(overriderImage, len(ov.ImageOverrider), func(i int) error { return e.image(ov.ImageOverrider[i]) })
	add(overriderCommand, len(ov.CommandOverrider), func(i int) error {
		return e.commandArgs(overriderCommand, "command", ov.CommandOverrider[i])
	})
	add(overriderArgs, len(ov.ArgsOverrider), func(i int) error {
		return e.commandArgs(overriderArgs, "args", ov.ArgsOverrider[i])
	})
	add(overriderLabels, len(ov.LabelsOverrider), func(i int) error {
		return e.labelsOrAnnotations(overriderLabels, "labels", ov.LabelsOverrider[i])
	})
	add(overriderAnnotations, len(ov.AnnotationsOverrider), func(i int) error {
		return e.labelsOrAnnotations(overriderAnnotations, "annotations", ov.AnnotationsOverrider[i])
	})
	add(overriderField, len(ov.FieldOverrider), func(i int) error { return e.field(ov.FieldOverrider[i]) })
	if len(ov.Plaintext) > 0 {
		out = append(out, step{
			overrider: overriderPlaintext,
			field:     overriderPlaintext,
			run:       func() error { return e.plaintext(ov.Plaintext) },
		})
	}
	return out
}

// plaintext applies all entries of one rule as one JSON patch.
func (e *editor) plaintext(items []policyv1alpha1.PlaintextOverrider) error {
	ops := make([]operation, len(items))
	for i, it := range items {
		ops[i] = operation{Op: it.Operator, Path: it.Path, Value: rawValue(it.Value)}
	}
	return e.patch(overriderPlaintext, ops)
}

// patch applies ops, in order, as one JSON patch and records each of them.
// Applying them one at a time is the same as applying the patch at once:
// json-patch runs the operations in order and stops at the first error.
func (e *editor) patch(overrider string, ops []operation) error {
	for _, op := range ops {
		before, insert := e.before(op)
		if err := patchObject(e.obj, op); err != nil {
			return err
		}
		e.record(overrider, op, before, insert)
	}
	return nil
}

// before returns the compact JSON at op's path before op runs, "" when
// absent. An add into an array inserts: it returns "" and the index the new
// element takes; otherwise the index is -1.
func (e *editor) before(op operation) (string, int) {
	if op.Op == policyv1alpha1.OpAdd {
		if i, ok := e.insertIndex(op.Path); ok {
			return "", i
		}
	}
	if v, ok := lookup(e.obj.Object, op.Path); ok {
		return compact(v), -1
	}
	return "", -1
}

// insertIndex returns where an add at pointer puts the new element when the
// parent is an array ("-" appends).
func (e *editor) insertIndex(pointer string) (int, bool) {
	parent, ok := lookup(e.obj.Object, parentPointer(pointer))
	arr, isArray := parent.([]any)
	if !ok || !isArray || !strings.Contains(pointer, "/") {
		return 0, false
	}
	last := pointer[strings.LastIndexByte(pointer, '/')+1:]
	if last == "-" {
		return len(arr), true
	}
	return arrayIndex(last, len(arr))
}

// record stores the change op made.
func (e *editor) record(overrider string, op operation, before string, insert int) {
	path := op.Path
	if insert >= 0 {
		path = parentPointer(op.Path) + "/" + fmt.Sprint(insert)
	}
	after := ""
	if v, ok := lookup(e.obj.Object, path); ok && op.Op != policyv1alpha1.OpRemove {
		after = compact(v)
	}
	e.edits = append(e.edits, edit{
		Change: Change{
			Policy:    e.policy,
			Rule:      e.rule,
			Overrider: overrider,
			Path:      op.Path,
			Before:    before,
			After:     after,
		},
		source: e.source,
	})
}

// parentPointer drops the last token of a JSON pointer.
func parentPointer(pointer string) string {
	if i := strings.LastIndexByte(pointer, '/'); i >= 0 {
		return pointer[:i]
	}
	return ""
}
