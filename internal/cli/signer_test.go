package cli

import "testing"

// Without --works-signing-key the store gets no signer at all: a nil
// *verify.Signer inside the interface was called on the first commit and
// panicked (the controller then hung).
func TestSupplyChainNoSigningKeyNoSigner(t *testing.T) {
	s, err := (&worksSigningOptions{}).signer()
	if err != nil || s != nil {
		t.Fatalf("signer() = %#v, %v; want a nil interface", s, err)
	}
}
