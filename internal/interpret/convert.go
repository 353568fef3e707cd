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

// maxDepth bounds the nesting of a returned table (a table can hold
// itself).
const maxDepth = 100

// fromLua converts a Lua value to an unstructured value: a table whose keys
// are exactly 1..n is a list, one with string keys a map; integral numbers
// become int64, others float64. An empty table is a map or a list as the
// value at the same place in ref (Lua cannot tell {} from []); where ref
// has nothing there, an empty table is left out of its map, as Karmada does.
func fromLua(v lua.LValue, ref any) (any, error) {
	return convertValue(v, ref, 0)
}

func convertValue(v lua.LValue, ref any, depth int) (any, error) {
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LString:
		return string(x), nil
	case lua.LNumber:
		return number(float64(x))
	case *lua.LTable:
		if depth >= maxDepth {
			return nil, fmt.Errorf("table nested deeper than %d levels (does it hold itself?)", maxDepth)
		}
		return convertTable(x, ref, depth)
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

func convertTable(t *lua.LTable, ref any, depth int) (any, error) {
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
		return convertList(t, n, ref, depth)
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
		sub, isTable := v.(*lua.LTable)
		if isTable && sub.Len() == 0 && refMap[key] == nil && empty(sub) {
			return // an empty table nothing tells the type of
		}
		var cv any
		if cv, err = convertValue(v, refMap[key], depth+1); err != nil {
			err = fmt.Errorf("%s: %w", key, err)
			return
		}
		out[key] = cv
	})
	return out, err
}

func convertList(t *lua.LTable, n int, ref any, depth int) (any, error) {
	refList, _ := ref.([]any)
	out := make([]any, 0, n)
	for i := 1; i <= n; i++ {
		var r any
		if i-1 < len(refList) {
			r = refList[i-1]
		} else if len(refList) > 0 {
			r = refList[0]
		}
		cv, err := convertValue(t.RawGetInt(i), r, depth+1)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i-1, err)
		}
		out = append(out, cv)
	}
	return out, nil
}

func empty(t *lua.LTable) bool {
	k, _ := t.Next(lua.LNil)
	return k == lua.LNil
}
