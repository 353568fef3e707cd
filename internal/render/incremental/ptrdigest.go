package incremental

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"

	"github.com/propagit/propagit/internal/load"
)

// policyDigests remembers the digest of each policy object by pointer. A
// load.Cache hands out the same policy objects, read-only, until their
// file changes, so a revision that changes one template encodes no policy
// again. Each Render keeps only the policies it used. Not safe for
// concurrent use.
type policyDigests struct {
	prev, cur map[any]policyDigest
}

type policyDigest struct {
	sum [sha256.Size]byte
	ok  bool
}

// of returns the digest of v's JSON, keyed by the pointer p that holds it;
// false when v cannot be encoded.
func (d *policyDigests) of(p, v any) ([sha256.Size]byte, bool) {
	if d.cur == nil {
		d.cur = map[any]policyDigest{}
	}
	if e, ok := d.cur[p]; ok {
		return e.sum, e.ok
	}
	e, ok := d.prev[p]
	if !ok {
		e.sum, e.ok = digestOf(v)
	}
	d.cur[p] = e
	return e.sum, e.ok
}

// next starts a Render: what the last one used is kept, the rest dropped.
func (d *policyDigests) next() {
	d.prev, d.cur = d.cur, nil
}

// digestOf hashes v's JSON; false when v cannot be encoded (then nothing
// that depends on it is reused).
func digestOf(v any) ([sha256.Size]byte, bool) {
	data, err := json.Marshal(v)
	if err != nil {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256(data), true
}

// Memo keys are length-prefixed parts appended to a buffer, hashed once;
// callers start from a stack array (keyBuffer) so a short key allocates
// nothing.
type keyBuffer [512]byte

func keyStr(b []byte, s string) []byte {
	return append(keyInt(b, int64(len(s))), s...)
}

func keyInt(b []byte, n int64) []byte { return binary.LittleEndian.AppendUint64(b, uint64(n)) }

func keySum(b []byte, s [sha256.Size]byte) []byte { return append(b, s[:]...) }

func keyBool(b []byte, v bool) []byte {
	if v {
		return keyInt(b, 1)
	}
	return keyInt(b, 0)
}

// templateSum identifies a template's content: the loader's digest of its
// document and the namespace it defaulted (its key's), else its JSON;
// false when it cannot be encoded.
func templateSum(t *load.Template, namespace string) ([sha256.Size]byte, bool) {
	if t.Digest != ([sha256.Size]byte{}) {
		var buf keyBuffer
		k := keyStr(buf[:0], "document")
		k = keySum(k, t.Digest)
		k = keyStr(k, namespace)
		return sha256.Sum256(k), true
	}
	return digestOf(t.Object.Object)
}
