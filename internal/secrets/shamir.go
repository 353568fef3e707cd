package secrets

// Shamir's secret sharing as sops splits a data key over key groups: each
// byte of the key is the constant term of a random polynomial over
// GF(2^8) (the AES field, x^8+x^4+x^3+x+1), and a share holds the
// polynomial's value at x for every byte, then x itself as its last byte.
// The key is the Lagrange interpolation at 0.

// combineShares recovers the secret from shares (at least two, of one
// length, with distinct x).
func combineShares(shares [][]byte) ([]byte, error) {
	n := len(shares[0])
	xs := make([]byte, len(shares))
	for i, s := range shares {
		if len(s) != n || n < 2 {
			return nil, malformed("Shamir shares of different or too short lengths")
		}
		xs[i] = s[n-1]
		for _, x := range xs[:i] {
			if x == xs[i] || xs[i] == 0 {
				return nil, malformed("Shamir shares with the same or a zero x")
			}
		}
	}
	if xs[0] == 0 {
		return nil, malformed("Shamir shares with the same or a zero x")
	}
	// The Lagrange basis at 0 depends only on the xs: l_i = Π x_j/(x_i+x_j).
	basis := make([]byte, len(xs))
	for i := range xs {
		b := byte(1)
		for j := range xs {
			if i != j {
				b = gfMul(b, gfMul(xs[j], gfInv(xs[i]^xs[j])))
			}
		}
		basis[i] = b
	}
	out := make([]byte, n-1)
	for k := range out {
		for i, s := range shares {
			out[k] ^= gfMul(s[k], basis[i])
		}
	}
	return out, nil
}

// gfMul multiplies in GF(2^8) without branching on its operands.
func gfMul(a, b byte) byte {
	var p byte
	for range 8 {
		p ^= -(b & 1) & a
		a = (a << 1) ^ (-(a >> 7) & 0x1b)
		b >>= 1
	}
	return p
}

// gfInv is a^254, the inverse of a non-zero a (a^255 = 1).
func gfInv(a byte) byte {
	r := byte(1)
	for range 254 {
		r = gfMul(r, a)
	}
	return r
}
