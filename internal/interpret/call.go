package interpret

import (
	"encoding/json"
	"errors"
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// call runs the script's chunk, then its operation's function with args,
// and hands the nret results to read, all inside the sandbox. Errors are
// *Error.
func (s *Script) call(lim Limits, nret int, args []any, read func(rets []lua.LValue) error) error {
	return s.run(lim, func(L *lua.LState) error {
		f, err := s.load(L)
		if err != nil {
			return err
		}
		vargs := make([]lua.LValue, len(args))
		for i, a := range args {
			vargs[i] = toLua(L, a)
		}
		if err := L.CallByParam(lua.P{Fn: f, NRet: nret, Protect: true}, vargs...); err != nil {
			return s.runtimeError(luaMessage(err))
		}
		rets := make([]lua.LValue, nret)
		for i := range rets {
			rets[i] = L.Get(i - nret)
		}
		L.Pop(nret)
		if err := read(rets); err != nil {
			return s.errorf(0, "%s returned %v", s.Operation.Function(), err)
		}
		return nil
	})
}

// load runs the chunk (which defines the function) and returns the
// operation's function.
func (s *Script) load(L *lua.LState) (*lua.LFunction, error) {
	L.Push(L.NewFunctionFromProto(s.proto))
	if err := L.PCall(0, 0, nil); err != nil {
		return nil, s.runtimeError(luaMessage(err))
	}
	name := s.Operation.Function()
	f, ok := L.GetGlobal(name).(*lua.LFunction)
	if !ok {
		return nil, s.errorf(0, "the script does not define function %s", name)
	}
	return f, nil
}

// Check runs the script's chunk in the sandbox and reports whether it
// defines its operation's function, without calling it.
func (s *Script) Check(lim Limits) error {
	return s.run(lim, func(L *lua.LState) error {
		_, err := s.load(L)
		return err
	})
}

// luaMessage is the Lua error without gopher-lua's stack traceback.
func luaMessage(err error) string {
	var ae *lua.ApiError
	if errors.As(err, &ae) && ae.Object != nil {
		return ae.Object.String()
	}
	return err.Error()
}

// decodeInto converts a Lua table result into out (a pointer) through
// JSON, as Karmada does.
func decodeInto(v lua.LValue, out any) error {
	if v.Type() != lua.LTTable {
		return fmt.Errorf("a %s, want a table", v.Type())
	}
	u, err := fromLua(v, nil)
	if err != nil {
		return err
	}
	data, err := json.Marshal(u)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// objectResult converts a Lua table result into an object map, with ref
// telling empty maps from empty lists.
func objectResult(v lua.LValue, ref any) (map[string]any, error) {
	if v.Type() != lua.LTTable {
		return nil, fmt.Errorf("a %s, want a table", v.Type())
	}
	u, err := fromLua(v, ref)
	if err != nil {
		return nil, err
	}
	m, ok := u.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a list, want an object")
	}
	return m, nil
}
