package apply

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/propagit/propagit/internal/interpret"
)

// retainScripted runs the Retain script of the object's kind, if any, on
// the desired object and its live copy, and applies its result instead,
// but only when the result keeps nothing but the member's own fields
// (checkRetained): a script may take the live value of a field, never
// write one of its own, nor change what the object is. A script error or
// a result that breaks the rule fails the object: nothing is written.
// Objects that hold or may hold decrypted values are never shown to a
// script (scriptable).
func (m *Manager) retainScripted(it *item, ip *interpret.Interpreter) bool {
	if it.live == nil || !m.scriptable(it.live, it.encrypted) {
		return true
	}
	out, s, err := ip.Retain(it.obj, it.live)
	switch {
	case s == nil:
		return true
	case err != nil:
		it.fail("was not applied: %s", redactedScriptError(s, err))
		return false
	}
	if err := checkRetained(it.obj.Object, it.live.Object, out.Object); err != nil {
		it.fail("was not applied: %s Retain (%s) %v; "+
			"retention may only keep the member's own values of fields, never change what the object is",
			interpret.DisplayCustomization(s.Customization), s.Location(), err)
		return false
	}
	it.obj.Object = out.Object
	return true
}

// checkRetained reports where result differs from desired other than by
// taking live's value at the same path, or by leaving out a field live
// does not have either (Karmada's Retain: the member's own fields win).
// apiVersion, kind, metadata.name and metadata.namespace, the other
// metadata fields but labels and annotations, and every label and
// annotation of propagit or Karmada must be exactly desired's, whatever
// live holds.
func checkRetained(desired, live, result map[string]any) error {
	for _, k := range []string{"apiVersion", "kind"} {
		if !same(desired[k], result[k]) {
			return fmt.Errorf("changed %s", k)
		}
	}
	dm, lm, rm := mapAt(desired, "metadata"), mapAt(live, "metadata"), mapAt(result, "metadata")
	for _, k := range unionKeys(dm, rm) {
		switch k {
		case "labels", "annotations":
			if err := checkRetainedKeys("metadata."+k, mapAt(dm, k), mapAt(lm, k), mapAt(rm, k)); err != nil {
				return err
			}
		default:
			if !same(dm[k], rm[k]) {
				return fmt.Errorf("changed metadata.%s", k)
			}
		}
	}
	for _, k := range unionKeys(desired, result) {
		if k == "apiVersion" || k == "kind" || k == "metadata" {
			continue
		}
		if p, bad := retainedDiff(k, desired, live, result, k); bad {
			return fmt.Errorf("changed %s to neither its desired nor its live value", p)
		}
	}
	return nil
}

// checkRetainedKeys applies the rule to labels or annotations: reserved
// keys must be desired's, the others follow retainedDiff.
func checkRetainedKeys(where string, desired, live, result map[string]any) error {
	for _, k := range unionKeys(desired, result) {
		p := where + "[" + strconv.Quote(k) + "]"
		if reservedKey(k) {
			if !same(desired[k], result[k]) {
				return fmt.Errorf("changed %s, which propagit owns", p)
			}
			continue
		}
		if _, bad := retainedDiff(p, desired, live, result, k); bad {
			return fmt.Errorf("changed %s to neither its desired nor its live value", p)
		}
	}
	return nil
}

// retainedDiff compares the field k of the parents d, l and r (maps or
// lists, nil when absent) and returns the path of the first field of r
// that is neither d's nor l's value there, recursing into maps and lists
// (by key and by index) so a result may mix both.
func retainedDiff(p string, d, l, r any, k any) (string, bool) {
	dv, dOK := child(d, k)
	lv, lOK := child(l, k)
	rv, rOK := child(r, k)
	switch {
	case !rOK:
		if dOK && lOK {
			return p, true // dropped a desired field the member has
		}
		return "", false
	case dOK && same(dv, rv), lOK && same(lv, rv):
		return "", false
	}
	switch rc := rv.(type) {
	case map[string]any:
		dm, isMap := dv.(map[string]any)
		if _, liveMap := lv.(map[string]any); !isMap && !liveMap {
			return p, true // a mapping neither side has there
		}
		for _, ck := range unionKeys(dm, rc) {
			if q, bad := retainedDiff(p+"."+ck, dv, lv, rv, ck); bad {
				return q, true
			}
		}
		return "", false
	case []any:
		dl, isList := dv.([]any)
		if _, liveList := lv.([]any); !isList && !liveList {
			return p, true
		}
		for i := range max(len(dl), len(rc)) {
			if q, bad := retainedDiff(p+"["+strconv.Itoa(i)+"]", dv, lv, rv, i); bad {
				return q, true
			}
		}
		return "", false
	}
	return p, true
}

// child returns parent[k] for a map and a string key or a list and an
// index; a null value counts as absent.
func child(parent any, k any) (any, bool) {
	var v any
	switch p := parent.(type) {
	case map[string]any:
		s, _ := k.(string)
		v = p[s]
	case []any:
		i, ok := k.(int)
		if !ok || i >= len(p) {
			return nil, false
		}
		v = p[i]
	}
	return v, v != nil
}

// same reports whether a and b are equal values, numbers by value and a
// null map entry as an absent one.
func same(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return subset(a, b) && subset(b, a)
}

// reservedKey reports whether a label or annotation key belongs to
// propagit or Karmada: their values steer ownership, pruning and drift.
func reservedKey(k string) bool {
	prefix, _, found := strings.Cut(k, "/")
	if !found {
		return false
	}
	for _, domain := range []string{"propagit.io", "karmada.io"} {
		if prefix == domain || strings.HasSuffix(prefix, "."+domain) {
			return true
		}
	}
	return false
}

func mapAt(m map[string]any, k string) map[string]any {
	v, _ := m[k].(map[string]any)
	return v
}

// unionKeys returns the keys of a and b, sorted, so errors are stable.
func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}
