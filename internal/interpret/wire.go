package interpret

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// request is one script call sent to a worker process.
type request struct {
	Customization string
	Operation     Operation
	File          string
	Line          int
	Source        string
	Limits        Limits
	NRet          int
	// CheckOnly runs the chunk without calling the operation's function.
	CheckOnly bool
	Args      []any
}

// response is a worker's answer: the results, or the script's error.
type response struct {
	Results []result `json:",omitempty"`
	Err     *Error   `json:",omitempty"`
}

// result is one value a script returned, converted in the worker: a
// table as its unstructured value, anything else by type and text.
type result struct {
	// Type is the Lua type name.
	Type string
	// Table is the converted table (JSON), set when Type is "table".
	Table json.RawMessage `json:",omitempty"`
	// Number, Bool and Text hold the other types; Text is cut to
	// maxResultText bytes, enough for an error message.
	Number string `json:",omitempty"`
	Bool   bool   `json:",omitempty"`
	Text   string `json:",omitempty"`
}

// maxResultText bounds the text kept of a non-table result.
const maxResultText = 200

// String renders the value as Lua's tostring would, cut.
func (r result) String() string {
	switch r.Type {
	case "number":
		return r.Number
	case "boolean":
		return strconv.FormatBool(r.Bool)
	}
	return r.Text
}

// toResult converts one returned value, with ref telling empty maps from
// empty lists in a table.
func toResult(v lua.LValue, ref any) (result, error) {
	r := result{Type: v.Type().String()}
	switch x := v.(type) {
	case lua.LNumber:
		r.Number = strconv.FormatFloat(float64(x), 'g', -1, 64)
	case lua.LBool:
		r.Bool = bool(x)
	case *lua.LTable:
		u, err := fromLua(x, ref)
		if err != nil {
			return r, err
		}
		if r.Table, err = json.Marshal(u); err != nil {
			return r, err
		}
	default:
		s := x.String()
		if len(s) > maxResultText {
			s = s[:maxResultText] + "…"
		}
		r.Text = s
	}
	return r, nil
}

// number reads a number result back.
func (r result) number() (float64, error) {
	return strconv.ParseFloat(r.Number, 64)
}

// decode reads a table result into out (a pointer).
func (r result) decode(out any) error {
	if r.Type != "table" {
		return fmt.Errorf("a %s, want a table", r.Type)
	}
	return json.Unmarshal(r.Table, out)
}

// value reads a table result back as an unstructured value, numbers as
// fromLua made them (int64 when whole and exact, else float64).
func (r result) value() (any, error) {
	if r.Type != "table" {
		return nil, fmt.Errorf("a %s, want a table", r.Type)
	}
	return unmarshalValue(r.Table)
}

func unmarshalValue(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return fromWire(v)
}

// fromWire turns json.Number back into int64 or float64 by the rule
// fromLua applies.
func fromWire(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			c, err := fromWire(e)
			if err != nil {
				return nil, err
			}
			x[k] = c
		}
	case []any:
		for i, e := range x {
			c, err := fromWire(e)
			if err != nil {
				return nil, err
			}
			x[i] = c
		}
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, err
		}
		return number(f)
	}
	return v, nil
}

// writeFrame writes v as JSON behind its 4-byte length.
func writeFrame(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	if _, err := w.Write(append(n[:], data...)); err != nil {
		return err
	}
	return nil
}

// errFrameTooLarge is a frame longer than the reader accepts.
var errFrameTooLarge = fmt.Errorf("frame too large")

// readFrame reads one frame of at most limit bytes.
func readFrame(r io.Reader, limit int) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if uint64(size) > uint64(limit) {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", errFrameTooLarge, size, limit)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, err
	}
	return data, nil
}
