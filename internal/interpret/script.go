package interpret

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/propagit/propagit/internal/api/configv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// DisplayCustomization is how messages name the customization called
// name, as they name every object (ObjectKey.Display).
func DisplayCustomization(name string) string {
	return workv1alpha1.ObjectKey{Group: configv1alpha1.Group, Kind: configv1alpha1.KindResourceInterpreterCustomization, Name: name}.Display()
}

// Operation is one customization rule, named by its field in
// spec.customizations.
type Operation string

// The operations and the Lua function each script must define.
const (
	Retention                Operation = "retention"
	ReplicaResource          Operation = "replicaResource"
	ReplicaRevision          Operation = "replicaRevision"
	StatusReflection         Operation = "statusReflection"
	StatusAggregation        Operation = "statusAggregation"
	HealthInterpretation     Operation = "healthInterpretation"
	DependencyInterpretation Operation = "dependencyInterpretation"
)

// Operations lists every operation in the order of Karmada's API type.
var Operations = []Operation{Retention, ReplicaResource, ReplicaRevision, StatusReflection,
	StatusAggregation, HealthInterpretation, DependencyInterpretation}

// Function is the global the operation's script defines (Karmada's names).
func (op Operation) Function() string {
	switch op {
	case Retention:
		return "Retain"
	case ReplicaResource:
		return "GetReplicas"
	case ReplicaRevision:
		return "ReviseReplica"
	case StatusReflection:
		return "ReflectStatus"
	case StatusAggregation:
		return "AggregateStatus"
	case HealthInterpretation:
		return "InterpretHealth"
	case DependencyInterpretation:
		return "GetDependencies"
	}
	return ""
}

// Script is one compiled luaScript and where it was written.
type Script struct {
	// Customization is the ResourceInterpreterCustomization's name.
	Customization string
	Operation     Operation
	// File and Line locate the script's first line in Git, so that a Lua
	// line number becomes a line of the file.
	File string
	Line int
	// Source is the script text.
	Source string
	proto  *lua.FunctionProto
}

// chunkName is the source name compiled into every script; error messages
// carrying it are rewritten to name the file and line.
const chunkName = "luaScript"

// Compile parses and compiles source. A syntax error is an *Error naming
// the file and line; so is a script that does not define the operation's
// function (found only when it runs, Karmada's "not found function").
func Compile(customization string, op Operation, source, file string, line int) (*Script, error) {
	s := &Script{Customization: customization, Operation: op, File: file, Line: line, Source: source}
	chunk, err := parse.Parse(strings.NewReader(source), chunkName)
	if err != nil {
		var pe *parse.Error
		if errors.As(err, &pe) {
			return nil, s.classed(ClassCompile, pe.Pos.Line, "%s near %q", pe.Message, pe.Token)
		}
		return nil, s.classed(ClassCompile, 0, "syntax error: %v", err)
	}
	proto, err := lua.Compile(chunk, chunkName)
	if err != nil {
		var ce *lua.CompileError
		if errors.As(err, &ce) {
			return nil, s.classed(ClassCompile, ce.Line, "%s", ce.Message)
		}
		return nil, s.errorf(0, "%v", err)
	}
	s.proto = proto
	return s, nil
}

// Location renders "file:line" of the script's first line.
func (s *Script) Location() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

// Error is a script that failed to compile or to run.
type Error struct {
	Customization string
	Operation     Operation
	// File and Line locate the failing line when the Lua error names one,
	// else the script's first line.
	File    string
	Line    int
	Message string
	// Budget is set when the script was stopped by a budget (instructions,
	// allocation, time or the size of its result), not by its own error.
	Budget bool
	// Class tells what went wrong, in words that carry nothing the script
	// produced.
	Class ErrorClass
	// ScriptLine is the line of the file the script starts on.
	ScriptLine int
}

// ErrorClass is what kind of failure an Error is.
type ErrorClass string

// The classes of Error.
const (
	ClassCompile  ErrorClass = "does not compile or does not define its function"
	ClassRuntime  ErrorClass = "raised an error"
	ClassResult   ErrorClass = "returned a result of the wrong type or shape"
	ClassBudget   ErrorClass = "was stopped by its budget"
	ClassInternal ErrorClass = "could not be run"
)

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s (%s:%d): %s",
		DisplayCustomization(e.Customization), e.Operation, e.File, e.Line, e.Message)
}

// Redacted is the error without anything the script produced or saw: the
// customization, the operation, the file and the line the script starts
// on, and the class. Message can quote the script's error("...") text,
// which can carry values of the object it ran on, and a script can fake
// the line number in it; Redacted is what may be stored where others
// read it (a member's status) for a script that ran on a live object.
func (e *Error) Redacted() string {
	class := e.Class
	if class == "" {
		class = ClassInternal
	}
	if e.Budget {
		class = ClassBudget
	}
	return fmt.Sprintf("%s %s (%s:%d): the script %s (details withheld: they may quote the object's values)",
		DisplayCustomization(e.Customization), e.Operation, e.File, e.ScriptLine, class)
}

// errorf builds an Error at Lua line luaLine (0: the script's first line).
func (s *Script) errorf(luaLine int, format string, args ...any) *Error {
	return s.classed(ClassInternal, luaLine, format, args...)
}

// maxMessage bounds an Error's message: a script's error("...") text
// ends up in logs and status records.
const maxMessage = 1024

// classed is errorf for an Error of class c.
func (s *Script) classed(c ErrorClass, luaLine int, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "… (cut)"
	}
	return &Error{Customization: s.Customization, Operation: s.Operation, File: s.File,
		Line: s.fileLine(luaLine), Message: msg, Class: c,
		ScriptLine: s.Line, Budget: c == ClassBudget}
}

func (s *Script) fileLine(luaLine int) int {
	if luaLine <= 0 {
		return s.Line
	}
	return s.Line + luaLine - 1
}

// luaPosition matches the "luaScript:12:" prefix Lua puts on runtime
// errors, anywhere in the message (nested errors repeat it).
var luaPosition = regexp.MustCompile(chunkName + `:(\d+):\s*`)

// runtimeError turns a Lua runtime error message into an Error at the line
// it names, with the prefixes removed.
func (s *Script) runtimeError(msg string) *Error {
	line := 0
	if m := luaPosition.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	return s.classed(ClassRuntime, line, "%s", strings.TrimSpace(luaPosition.ReplaceAllString(msg, "")))
}
