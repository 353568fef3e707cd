package interpret

import (
	"errors"

	lua "github.com/yuin/gopher-lua"
)

// call runs the script's chunk, then its operation's function with args,
// in a worker process, and hands the nret results (converted there) to
// read. Errors are *Error.
func (s *Script) call(lim Limits, nret int, args []any, read func(rets []result) error) error {
	resp, err := workers.do(s, &request{Customization: s.Customization, Operation: s.Operation, File: s.File,
		Line: s.Line, Source: s.Source, Limits: lim, NRet: nret, Args: args})
	if err != nil {
		return err
	}
	if resp.Err != nil {
		return resp.Err
	}
	if len(resp.Results) != nret {
		return s.errorf(0, "the script's process sent %d results, want %d", len(resp.Results), nret)
	}
	if err := read(resp.Results); err != nil {
		return s.classed(ClassResult, 0, "%s returned %v", s.Operation.Function(), err)
	}
	return nil
}

// callLocal is call inside this process: what a worker runs.
func (s *Script) callLocal(lim Limits, nret int, args []any, read func(rets []lua.LValue) error) error {
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
			if le := (*limitError)(nil); errors.As(err, &le) && le.budget {
				return s.classed(ClassBudget, 0, "stopped: %s returned %v", s.Operation.Function(), err)
			}
			return s.classed(ClassResult, 0, "%s returned %v", s.Operation.Function(), err)
		}
		return nil
	})
}

// resultRef is the value telling empty maps from empty lists in the first
// result of op called with args.
func resultRef(op Operation, args []any) any {
	switch {
	case len(args) == 0:
		return nil
	case op == Retention && len(args) == 2:
		return mergeRefs(args[0], args[1])
	case op == ReplicaRevision || op == StatusAggregation:
		return args[0]
	case op == StatusReflection:
		m, _ := args[0].(map[string]any)
		return m["status"]
	}
	return nil
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
		return nil, s.classed(ClassCompile, 0, "the script does not define function %s", name)
	}
	return f, nil
}

// Check runs the script's chunk in a worker and reports whether it
// defines its operation's function, without calling it.
func (s *Script) Check(lim Limits) error {
	resp, err := workers.do(s, &request{Customization: s.Customization, Operation: s.Operation, File: s.File,
		Line: s.Line, Source: s.Source, Limits: lim, CheckOnly: true})
	if err != nil {
		return err
	}
	if resp.Err != nil {
		return resp.Err
	}
	return nil
}

// checkLocal is Check inside this process: what a worker runs.
func (s *Script) checkLocal(lim Limits) error {
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
