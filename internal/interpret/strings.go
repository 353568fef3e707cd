package interpret

import (
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"
)

// Bounds on the string functions that run in Go, where the instruction
// budget does not reach: one call must not allocate or loop without end.
const (
	// maxRep is the longest string string.rep may build.
	maxRep = 1 << 20
	// maxSubject is the longest string a pattern function takes (Karmada's
	// safe string library refuses parameters over 1e6 bytes too).
	maxSubject = 1_000_000
	// maxGsubWork bounds string.gsub's copying: gopher-lua copies the
	// whole string once per replacement.
	maxGsubWork = 64 << 20
	// maxConcat is the longest string table.concat may build.
	maxConcat = 16 << 20
	// maxFormatDigits is the most digits of a string.format width or
	// precision, as in Lua 5.1 (gopher-lua hands the format to Go's fmt,
	// which pads to a million).
	maxFormatDigits = 2
)

// boundStrings replaces string.rep, gsub, find, match and gmatch with
// guarded versions, in the string table and so in the string metatable.
func boundStrings(L *lua.LState) {
	mod, ok := L.GetGlobal(lua.StringLibName).(*lua.LTable)
	if !ok {
		return
	}
	orig := func(name string) *lua.LFunction { f, _ := mod.RawGetString(name).(*lua.LFunction); return f }
	rep, gsub := orig("rep"), orig("gsub")
	L.SetField(mod, "rep", L.NewFunction(func(L *lua.LState) int {
		s, n := L.CheckString(1), L.CheckInt(2)
		if n > 0 && len(s) > 0 && n > maxRep/len(s) {
			L.RaiseError("string.rep: result longer than %d bytes", maxRep)
		}
		return forward(L, rep)
	}))
	L.SetField(mod, "gsub", L.NewFunction(func(L *lua.LState) int {
		s, pat := L.CheckString(1), L.CheckString(2)
		checkSubject(L, "gsub", s)
		matches, err := pm.Find(pat, []byte(s), 0, L.OptInt(4, -1))
		if err != nil {
			L.RaiseError("%s", err.Error())
		}
		grown := len(s)
		if r, ok := L.Get(3).(lua.LString); ok {
			grown += len(matches) * len(r)
		}
		if len(matches) > 0 && grown > maxGsubWork/len(matches) {
			L.RaiseError("string.gsub: too much work (%d replacements in %d bytes)", len(matches), grown)
		}
		return forward(L, gsub)
	}))
	format := orig("format")
	L.SetField(mod, "format", L.NewFunction(func(L *lua.LState) int {
		checkFormat(L, L.CheckString(1))
		return forward(L, format)
	}))
	boundConcat(L)
	for _, name := range []string{"find", "match", "gmatch"} {
		f := orig(name)
		L.SetField(mod, name, L.NewFunction(func(L *lua.LState) int {
			checkSubject(L, name, L.CheckString(1))
			return forward(L, f)
		}))
	}
}

func checkSubject(L *lua.LState, name, s string) {
	if len(s) > maxSubject {
		L.RaiseError("string.%s: string longer than %d bytes", name, maxSubject)
	}
}

// forward calls f with this call's arguments and returns its results.
func forward(L *lua.LState, f *lua.LFunction) int {
	n := L.GetTop()
	L.Push(f)
	for i := 1; i <= n; i++ {
		L.Push(L.Get(i))
	}
	L.Call(n, lua.MultRet)
	return L.GetTop() - n
}

// checkFormat refuses a width or precision of more than maxFormatDigits
// digits.
func checkFormat(L *lua.LState, f string) {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		if i++; i < len(f) && f[i] == '%' {
			continue
		}
		for i < len(f) && indexByte("-+ #0", f[i]) {
			i++
		}
		for part := 0; part < 2; part++ {
			digits := 0
			for ; i < len(f) && f[i] >= '0' && f[i] <= '9'; i++ {
				digits++
			}
			if digits > maxFormatDigits {
				L.RaiseError("string.format: invalid format (width or precision too long)")
			}
			if part == 0 && (i >= len(f) || f[i] != '.') {
				break
			}
			i++
		}
	}
}

func indexByte(set string, b byte) bool {
	for i := 0; i < len(set); i++ {
		if set[i] == b {
			return true
		}
	}
	return false
}

// boundConcat replaces table.concat with a version that measures the
// result before building it.
func boundConcat(L *lua.LState) {
	mod, ok := L.GetGlobal(lua.TabLibName).(*lua.LTable)
	if !ok {
		return
	}
	concat, ok := mod.RawGetString("concat").(*lua.LFunction)
	if !ok {
		return
	}
	L.SetField(mod, "concat", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		sep := L.OptString(2, "")
		i, j := max(L.OptInt(3, 1), 1), min(L.OptInt(4, t.Len()), t.Len())
		total := 0
		for k := i; k <= j; k++ {
			if total += len(lua.LVAsString(t.RawGetInt(k))) + len(sep); total > maxConcat {
				L.RaiseError("table.concat: result longer than %d bytes", maxConcat)
			}
		}
		return forward(L, concat)
	}))
}
