package load

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	yaml "go.yaml.in/yaml/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Types decoded from a scalar or taken as they are, instead of by their
// fields.
var (
	jsonType      = reflect.TypeFor[apiextensionsv1.JSON]()
	timeType      = reflect.TypeFor[metav1.Time]()
	microTimeType = reflect.TypeFor[metav1.MicroTime]()
	durationType  = reflect.TypeFor[metav1.Duration]()
	quantityType  = reflect.TypeFor[resource.Quantity]()
	intOrStrType  = reflect.TypeFor[intstr.IntOrString]()
	unmarshaler   = reflect.TypeFor[json.Unmarshaler]()
)

// strictWalker checks a normalized YAML node tree against a Go type the way
// a strict JSON decoder would (json tag names, case-sensitive, embedded
// structs inlined), but keeps each node's line. It records the line of every
// field it sees, so later semantic checks can point at lines too.
//
// Two classes of problems are softer than the rest (see severity): unknown
// fields in metadata, which the API server drops with a warning, are
// warnings; an object or list where the type wants something else is the
// mark of pseudo-YAML or a "{placeholder}", and skips the document.
type strictWalker struct {
	lines  map[string]int
	issues []issue
	// lenient is a path prefix (e.g. "status") under which scalars are
	// taken as strings where strings are expected; asString records them.
	lenient  string
	asString map[*yaml.Node]bool
}

func newStrictWalker() *strictWalker {
	return &strictWalker{lines: map[string]int{}, asString: map[*yaml.Node]bool{}}
}

func (w *strictWalker) add(path string, n *yaml.Node, format string, args ...any) {
	w.issues = append(w.issues, issue{field: path, line: n.Line, msg: fmt.Sprintf(format, args...)})
}

func (w *strictWalker) addSev(sev severity, path string, n *yaml.Node, format string, args ...any) {
	w.add(path, n, format, args...)
	w.issues[len(w.issues)-1].sev = sev
}

// walk checks n against t. A null value is accepted for every type: JSON
// decoding leaves the field at its zero value.
func (w *strictWalker) walk(n *yaml.Node, t reflect.Type, path string) {
	if isNull(n) || w.special(n, t, path) {
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		w.walk(n, t.Elem(), path)
	case reflect.Struct:
		w.object(n, t, path)
	case reflect.Map:
		w.dict(n, t, path)
	case reflect.Slice, reflect.Array:
		w.list(n, t, path)
	case reflect.String:
		w.expectString(n, path)
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			w.mismatch(n, path, "a boolean")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		w.integer(n, t, path)
	case reflect.Float32, reflect.Float64:
		if tag := n.ShortTag(); n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") {
			w.mismatch(n, path, "a number")
		}
	}
}

// special handles the types that do not decode field by field. It reports
// whether t was one of them.
func (w *strictWalker) special(n *yaml.Node, t reflect.Type, path string) bool {
	switch t {
	case jsonType:
		return true
	case timeType, microTimeType:
		if w.expectString(n, path) {
			if _, err := time.Parse(time.RFC3339, n.Value); err != nil {
				w.add(path, n, "%s is not an RFC 3339 time", got(n))
			}
		}
		return true
	case durationType:
		if w.expectString(n, path) {
			if _, err := time.ParseDuration(n.Value); err != nil {
				w.add(path, n, "%s is not a duration", got(n))
			}
		}
		return true
	case quantityType:
		if w.expectScalar(n, path, "a quantity") {
			if _, err := resource.ParseQuantity(n.Value); err != nil {
				w.add(path, n, "%s is not a quantity", got(n))
			}
		}
		return true
	case intOrStrType:
		if tag := n.ShortTag(); n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!str") {
			w.mismatch(n, path, "an integer or a string")
		}
		return true
	}
	// Other types with their own JSON decoding are taken as they are.
	return t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && reflect.PointerTo(t).Implements(unmarshaler)
}

// object checks a mapping against a struct's json fields.
func (w *strictWalker) object(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		w.mismatch(n, path, "an object")
		return
	}
	fields := jsonFields(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := fieldPath(path, k.Value)
		w.lines[p] = k.Line
		ft, ok := fields[k.Value]
		if !ok {
			sev := sevError
			if strings.HasPrefix(p, "metadata.") {
				sev = sevWarning
			}
			msg := "unknown field%s"
			if sev == sevWarning {
				msg += "; ignored"
			}
			w.addSev(sev, p, k, msg, suggest(k.Value, fields))
			continue
		}
		w.walk(v, ft, p)
	}
}

// dict checks a mapping with free keys (labels, resource lists, …).
func (w *strictWalker) dict(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		w.mismatch(n, path, "an object")
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := keyPath(path, k.Value)
		w.lines[p] = k.Line
		w.walk(v, t.Elem(), p)
	}
}

// list checks a sequence; []byte is a base64 string in JSON.
func (w *strictWalker) list(n *yaml.Node, t reflect.Type, path string) {
	if t.Elem().Kind() == reflect.Uint8 {
		w.expectString(n, path)
		return
	}
	if n.Kind != yaml.SequenceNode {
		w.mismatch(n, path, "a list")
		return
	}
	for i, c := range n.Content {
		p := indexPath(path, i)
		w.lines[p] = c.Line
		w.walk(c, t.Elem(), p)
	}
}

// integer accepts integers, and floats with an integral value, that fit t.
func (w *strictWalker) integer(n *yaml.Node, t reflect.Type, path string) {
	var f float64
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil || f != math.Trunc(f) {
		w.mismatch(n, path, "an integer")
		return
	}
	bits := t.Bits()
	lo, hi := -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
		lo, hi = 0, math.Ldexp(1, bits)
	}
	if f < lo || f >= hi {
		w.add(path, n, "%s is out of range for a %d-bit integer", n.Value, bits)
	}
}

// expectString accepts a scalar that JSON holds as a string; under the
// lenient prefix, any scalar.
func (w *strictWalker) expectString(n *yaml.Node, path string) bool {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!str", "!!timestamp", "!!binary":
			return true
		}
		if w.lenient != "" && (path == w.lenient || strings.HasPrefix(path, w.lenient+".")) {
			w.asString[n] = true
			return true
		}
	}
	w.mismatch(n, path, "a string")
	return false
}

func (w *strictWalker) expectScalar(n *yaml.Node, path, want string) bool {
	if n.Kind != yaml.ScalarNode {
		w.mismatch(n, path, want)
		return false
	}
	return true
}

// mismatch reports a value of the wrong type. Getting an object or a list
// where the type wants something else skips the document (see severity).
func (w *strictWalker) mismatch(n *yaml.Node, path, want string) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		w.addSev(sevSkip, path, n, "expected %s, got %s (pseudo-YAML or a {placeholder}?)", want, got(n))
		return
	}
	w.add(path, n, "expected %s, got %s", want, got(n))
}

// got describes a node for a message: a quoted string, a bare number or
// boolean, "an object" or "a list".
func got(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "a list"
	}
	v := n.Value
	if len(v) > 60 {
		v = v[:57] + "..."
	}
	if n.ShortTag() == "!!str" {
		return strconv.Quote(v)
	}
	return v
}

// suggest returns ` (did you mean "x"?)` when a known field differs from
// name only in case, or else is the one closest to it by a typo or two.
func suggest(name string, fields map[string]reflect.Type) string {
	names := make([]string, 0, len(fields))
	for f := range fields {
		if strings.EqualFold(f, name) {
			return fmt.Sprintf(" (did you mean %q?)", f)
		}
		names = append(names, f)
	}
	if f := Closest(name, names); f != "" {
		return fmt.Sprintf(" (did you mean %q?)", f)
	}
	return ""
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps the JSON names of t's fields to their types, with
// embedded structs inlined (outer fields win, as in encoding/json).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	var inlined []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			inlined = append(inlined, ft)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	for _, it := range inlined {
		for k, v := range jsonFields(it) {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
	}
	fieldCache.Store(t, m)
	return m
}
