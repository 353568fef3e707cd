package secrets

import (
	"errors"
	"io"
	"strings"

	"filippo.io/age"
	"filippo.io/age/armor"
)

// maxStanza bounds one armored age file of the sops section; sops writes
// about 400 bytes per recipient.
const maxStanza = 16 << 10

// dataKey recovers the 32-byte data key with ids: from the one key group,
// or from a Shamir share of each of at least shamir_threshold groups
// (all groups when it is unset, as sops splits). Only age stanzas are
// opened; a document without any is refused without reading the others.
func dataKey(m *metadata, ids []age.Identity) ([]byte, error) {
	recipients, others := m.keys()
	if len(recipients) == 0 {
		return nil, unsupported("no age key; the data key is encrypted only with %v, which propagit does not use", others)
	}
	noKey := &NoKeyError{Recipients: recipients, Have: recipientsOf(ids)}
	var parts [][]byte
	for _, g := range m.groups {
		if p := openGroup(g, ids); p != nil {
			parts = append(parts, p)
		}
	}
	var key []byte
	if len(m.groups) == 1 {
		if len(parts) == 0 {
			return nil, noKey
		}
		key = parts[0]
	} else {
		need := m.ShamirThreshold
		if need == 0 {
			need = len(m.groups)
		}
		if len(parts) < max(need, 2) {
			return nil, noKey
		}
		var err error
		if key, err = combineShares(parts); err != nil {
			return nil, err
		}
	}
	if len(key) != 32 {
		return nil, malformed("the data key is %d bytes, not 32", len(key))
	}
	return key, nil
}

// openGroup returns what the first of g's age stanzas that ids open
// holds, nil when none opens.
func openGroup(g keyGroup, ids []age.Identity) []byte {
	if len(ids) == 0 {
		return nil
	}
	for _, k := range g.Age {
		if len(k.Enc) > maxStanza {
			continue
		}
		r, err := age.Decrypt(armor.NewReader(strings.NewReader(k.Enc)), ids...)
		if err != nil {
			continue
		}
		// A data key or a share is 32 or 33 bytes; read a little more to
		// see a longer one, never an unbounded amount.
		b, err := io.ReadAll(io.LimitReader(r, 64))
		if err == nil || errors.Is(err, io.EOF) {
			return b
		}
	}
	return nil
}
