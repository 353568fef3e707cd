package interpret

import (
	"fmt"
	"math"
	"slices"

	lua "github.com/yuin/gopher-lua"
)

// toLua converts an unstructured value (maps, slices, strings, numbers,
// bools, nil) to Lua. Map keys are inserted in sorted order, so pairs()
// visits them in the same order on every run.
func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case map[string]any:
		t := L.CreateTable(0, len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			t.RawSetString(k, toLua(L, x[k]))
		}
		return t
	case []any:
		t := L.CreateTable(len(x), 0)
		for _, e := range x {
			t.Append(toLua(L, e))
		}
		return t
	case string:
		return lua.LString(x)
	case bool:
		return lua.LBool(x)
	case int64:
		return lua.LNumber(x)
	case int32:
		return lua.LNumber(x)
	case int:
		return lua.LNumber(x)
	case float64:
		return lua.LNumber(x)
	}
	return lua.LString(fmt.Sprint(v))
}

// Bounds on a returned value: a table can hold itself, and a few
// hundred instructions build a table that reaches 2^60 values through
// shared subtables, so conversion counts what it visits.
const (
	// maxDepth bounds the nesting of a returned table.
	maxDepth = 100
	// maxValues bounds the values visited, shared ones counted each time.
	maxValues = 1 << 18
	// maxStringBytes bounds the bytes of the strings visited.
	maxStringBytes = 8 << 20
)

// limitError is a result past one of the bounds above: it is reported
// without the path it was found at (which repeats for every level).
type limitError struct {
	msg string
	// budget is set for the size bounds (the result is too big, not
	// malformed).
	budget bool
}

func (e *limitError) Error() string { return e.msg }

// withPath prefixes err with where it was found, unless it is a
// limitError.
func withPath(path string, err error) error {
	if _, ok := err.(*limitError); ok {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// converter counts what one conversion visited.
type converter struct {
	values, bytes int
}

// fromLua converts a Lua value to an unstructured value: a table whose keys
// are exactly 1..n is a list, one with string keys a map; integral numbers
// become int64, others float64. An empty table is a map or a list as the
// value at the same place in ref (Lua cannot tell {} from []); where ref
// has nothing there, an empty table is left out of its map, as Karmada does.
func fromLua(v lua.LValue, ref any) (any, error) {
	return (&converter{}).value(v, ref, 0)
}

func (c *converter) value(v lua.LValue, ref any, depth int) (any, error) {
	if c.values++; c.values > maxValues {
		return nil, &limitError{fmt.Sprintf("a result of more than %d values (a table shared many times counts each time)", maxValues), true}
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LString:
		if c.bytes += len(x); c.bytes > maxStringBytes {
			return nil, &limitError{fmt.Sprintf("a result with more than %d MiB of strings", maxStringBytes>>20), true}
		}
		return string(x), nil
	case lua.LNumber:
		return number(float64(x))
	case *lua.LTable:
		if depth >= maxDepth {
			return nil, &limitError{fmt.Sprintf("table nested deeper than %d levels (does it hold itself?)", maxDepth), false}
		}
		return c.table(x, ref, depth)
	}
	return nil, fmt.Errorf("a %s cannot be part of an object", v.Type())
}

func number(f float64) (any, error) {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return nil, fmt.Errorf("number %v cannot be part of an object", f)
	case f == math.Trunc(f) && math.Abs(f) < 1<<53:
		return int64(f), nil
	}
	return f, nil
}

func (c *converter) table(t *lua.LTable, ref any, depth int) (any, error) {
	n := t.Len()
	strKeys, total := 0, 0
	var bad lua.LValue
	t.ForEach(func(k, _ lua.LValue) {
		total++
		switch k.(type) {
		case lua.LString:
			strKeys++
		case lua.LNumber:
		default:
			bad = k
		}
	})
	switch {
	case bad != nil:
		return nil, fmt.Errorf("table key of type %s cannot be part of an object", bad.Type())
	case total == 0:
		if _, isList := ref.([]any); isList {
			return []any{}, nil
		}
		return map[string]any{}, nil
	case strKeys == 0 && total == n:
		return c.list(t, n, ref, depth)
	case strKeys == 0:
		return nil, fmt.Errorf("list has gaps or indexes that are not 1..n")
	case strKeys != total:
		return nil, fmt.Errorf("table mixes list entries and named fields")
	}
	refMap, _ := ref.(map[string]any)
	out := make(map[string]any, total)
	var err error
	t.ForEach(func(k, v lua.LValue) {
		if err != nil {
			return
		}
		key := string(k.(lua.LString))
		if c.bytes += len(key); c.bytes > maxStringBytes {
			err = &limitError{fmt.Sprintf("a result with more than %d MiB of strings", maxStringBytes>>20), true}
			return
		}
		sub, isTable := v.(*lua.LTable)
		if isTable && sub.Len() == 0 && refMap[key] == nil && empty(sub) {
			return // an empty table nothing tells the type of
		}
		var cv any
		if cv, err = c.value(v, refMap[key], depth+1); err != nil {
			err = withPath(key, err)
			return
		}
		out[key] = cv
	})
	return out, err
}

func (c *converter) list(t *lua.LTable, n int, ref any, depth int) (any, error) {
	refList, _ := ref.([]any)
	out := make([]any, 0, n)
	for i := 1; i <= n; i++ {
		var r any
		if i-1 < len(refList) {
			r = refList[i-1]
		} else if len(refList) > 0 {
			r = refList[0]
		}
		cv, err := c.value(t.RawGetInt(i), r, depth+1)
		if err != nil {
			return nil, withPath(fmt.Sprintf("[%d]", i-1), err)
		}
		out = append(out, cv)
	}
	return out, nil
}

func empty(t *lua.LTable) bool {
	k, _ := t.Next(lua.LNil)
	return k == lua.LNil
}
