package secrets

import (
	"errors"
	"fmt"
	"strings"
)

// Reasons a document cannot be decrypted; match them with errors.Is.
var (
	// ErrNoKey: none of the identities opens the data key — the file is not
	// encrypted to this member's recipient, or no key is configured.
	ErrNoKey = errors.New("no matching decryption key")
	// ErrMAC: the values do not match the file's MAC (tampered, or edited
	// without sops).
	ErrMAC = errors.New("MAC mismatch")
	// ErrUnsupported: the file uses a SOPS feature or key type propagit
	// does not decrypt, or a kind that may not be encrypted.
	ErrUnsupported = errors.New("unsupported SOPS document")
	// ErrMalformed: the sops metadata or an encrypted value is not what
	// sops writes.
	ErrMalformed = errors.New("malformed SOPS document")
	// ErrRelocated: the document is carried by an object other than the
	// one it was committed as (another name, namespace, kind or
	// apiVersion), and is not decrypted into it.
	ErrRelocated = errors.New("SOPS document bound to another object")
)

// NoKeyError says which recipients a document is encrypted to and which
// this keyring holds; both are public keys, safe to show in status.
type NoKeyError struct {
	// Recipients are the age recipients in the document's metadata.
	Recipients []string
	// Have are the recipients of the identities tried.
	Have []string
}

func (e *NoKeyError) Error() string {
	have := "no age key is configured"
	if len(e.Have) > 0 {
		have = "have " + strings.Join(e.Have, ", ")
	}
	return fmt.Sprintf("%v: encrypted to %s; %s", ErrNoKey, orNone(e.Recipients), have)
}

// Unwrap makes errors.Is(err, ErrNoKey) hold.
func (e *NoKeyError) Unwrap() error { return ErrNoKey }

func orNone(s []string) string {
	if len(s) == 0 {
		return "no age recipient"
	}
	return strings.Join(s, ", ")
}

// malformed wraps ErrMalformed with a message naming the field.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// unsupported wraps ErrUnsupported with a message naming the feature.
func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}
