package webhook

import "encoding/json"

// maxRefBytes bounds the ref kept from a payload; a longer one is no
// branch the controller follows.
const maxRefBytes = 1024

// refScanner finds the top-level "ref" string of a JSON push payload as
// the body streams past, keeping a few bytes instead of the body: an
// unauthenticated GitHub request must be read whole before its signature
// can be checked, and holding up to 1 MiB of it per connection is what let
// slow bodies pin the heap. It does not validate the JSON; only a payload
// whose signature or token checks out is ever asked for its ref.
type refScanner struct {
	depth   int
	inStr   bool
	esc     bool
	wantKey bool // at depth 1, the next string is a key
	// cur is the depth-1 string being read, when it is a key or the value
	// of "ref"; over is set when it outgrew maxRefBytes.
	cur      []byte
	keep     bool
	isKey    bool
	over     bool
	lastKey  string
	ref      []byte
	refFound bool
}

// Write implements io.Writer; it never fails.
func (s *refScanner) Write(p []byte) (int, error) {
	for _, c := range p {
		if s.inStr {
			s.stringByte(c)
			continue
		}
		switch c {
		case '"':
			s.inStr = true
			s.isKey = s.depth == 1 && s.wantKey
			s.keep = s.isKey || (s.depth == 1 && s.lastKey == "ref")
			s.cur, s.over = s.cur[:0], false
		case '{', '[':
			s.depth++
			s.wantKey = s.depth == 1 && c == '{'
		case '}', ']':
			s.depth--
		case ',':
			s.wantKey = s.depth == 1
		case ':':
			if s.depth == 1 {
				s.wantKey = false
			}
		default:
			if s.depth == 1 && !s.wantKey && s.lastKey == "ref" && c > ' ' {
				s.lastKey = "" // "ref" holds a number, null or bool: no ref
			}
		}
	}
	return len(p), nil
}

func (s *refScanner) stringByte(c byte) {
	switch {
	case s.esc:
		s.esc = false
	case c == '\\':
		s.esc = true
	case c == '"':
		s.inStr = false
		s.endString()
		return
	}
	if s.keep {
		if len(s.cur) < maxRefBytes {
			s.cur = append(s.cur, c)
		} else {
			s.over = true
		}
	}
}

func (s *refScanner) endString() {
	switch {
	case s.isKey:
		s.lastKey = string(s.cur)
		if s.over {
			s.lastKey = ""
		}
	case s.keep:
		s.ref = append(s.ref[:0], s.cur...)
		s.refFound = !s.over
		s.lastKey = ""
	}
	s.keep, s.isKey = false, false
}

// Ref returns the decoded ref, or "" when the payload had none.
func (s *refScanner) Ref() string {
	if !s.refFound || s.depth != 0 {
		return ""
	}
	var ref string
	if json.Unmarshal(append(append([]byte{'"'}, s.ref...), '"'), &ref) != nil {
		return ""
	}
	return ref
}
