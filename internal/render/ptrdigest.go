package render

import (
	"crypto/sha256"
	"encoding/json"
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
