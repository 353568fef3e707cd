package interpret

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/propagit/propagit/internal/childproc"
)

// workerEnv is set in a worker process's environment; the worker's code
// runs from init, before main or TestMain, in any binary that links this
// package.
const workerEnv = "PROPAGIT_INTERPRET_WORKER"

// addressSpaceHeadroom is how much address space a worker may map beyond
// what it has when it starts: three times the default allocation budget,
// room for the budget, the collector's slack and the runtime's
// reservations. The watchdog samples allocation every millisecond, so a
// script that grows a string threefold per instruction can pass its
// budget by one step before it is stopped; the next step, or one Go call
// asking for gigabytes at once, fails with "out of memory" in the worker.
const addressSpaceHeadroom = 768 << 20

// Worker process exit codes the parent tells apart.
const (
	exitServed  = 0 // the parent closed the request pipe
	exitRetired = 3 // a call was stopped for its budget: the process is spent
	exitBroken  = 4 // a request could not be read or answered
)

func init() {
	if os.Getenv(workerEnv) != "1" {
		return
	}
	os.Exit(serve(os.NewFile(3, "requests"), os.NewFile(4, "responses")))
}

// serve answers requests until in closes. A call stopped for its budget
// ends the process after its answer: its goroutine may still be running,
// and only the end of the process really stops it.
func serve(in io.Reader, out io.Writer) int {
	childproc.LimitAddressSpace(addressSpaceHeadroom)
	compiled := map[string]*Script{}
	for {
		data, err := readFrame(in, 1<<30)
		if err == io.EOF {
			return exitServed
		}
		if err != nil {
			return exitBroken
		}
		req := &request{}
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		if err := d.Decode(req); err != nil {
			return exitBroken
		}
		resp := answer(req, compiled)
		if err := writeFrame(out, resp); err != nil {
			return exitBroken
		}
		if resp.Err != nil && resp.Err.Budget {
			return exitRetired
		}
	}
}

// answer compiles (once per source) and runs one request.
func answer(req *request, compiled map[string]*Script) *response {
	key := strings.Join([]string{req.Customization, string(req.Operation), req.File, strconv.Itoa(req.Line), req.Source}, "\x00")
	s := compiled[key]
	if s == nil {
		var err error
		if s, err = Compile(req.Customization, req.Operation, req.Source, req.File, req.Line); err != nil {
			return &response{Err: asError(err)}
		}
		if len(compiled) >= 256 {
			clear(compiled)
		}
		compiled[key] = s
	}
	if req.CheckOnly {
		return &response{Err: asError(s.checkLocal(req.Limits))}
	}
	for i, a := range req.Args {
		var err error
		if req.Args[i], err = fromWire(a); err != nil {
			return &response{Err: s.errorf(0, "bad argument: %v", err)}
		}
	}
	resp := &response{}
	ref := resultRef(req.Operation, req.Args)
	resp.Err = asError(s.callLocal(req.Limits, req.NRet, req.Args, func(rets []lua.LValue) error {
		for i, v := range rets {
			r := ref
			if i > 0 {
				r = nil
			}
			res, err := toResult(v, r)
			if err != nil {
				return err
			}
			resp.Results = append(resp.Results, res)
		}
		return nil
	}))
	return resp
}

func asError(err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		return e
	}
	return &Error{Message: err.Error()}
}
