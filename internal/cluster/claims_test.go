package cluster

import (
	"encoding/base64"
	"testing"
)

// jwt builds an unsigned token with the given claims JSON.
func jwt(claims string) string {
	return "e30." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + ".c2ln"
}

// TestServiceAccountClaims pins which tokens Renew touches: expiring
// ServiceAccount tokens with a valid subject, nothing else.
func TestServiceAccountClaims(t *testing.T) {
	for _, tc := range []struct {
		name, token string
		ok          bool
	}{
		{"service account token", jwt(`{"exp":2000,"iat":1000,"sub":"system:serviceaccount:propagit-system:propagit"}`), true},
		{"static token", "m1-secret-token", false},
		{"no expiry", jwt(`{"iat":1000,"sub":"system:serviceaccount:propagit-system:propagit"}`), false},
		{"a user's token", jwt(`{"exp":2000,"iat":1000,"sub":"alice"}`), false},
		{"a subject that is not a name", jwt(`{"exp":2000,"iat":1000,"sub":"system:serviceaccount:../etc:x"}`), false},
		{"not base64", "a.!!!.c", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := serviceAccountClaims(tc.token)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if ok && (c.namespace != "propagit-system" || c.name != "propagit") {
				t.Errorf("subject = %s/%s", c.namespace, c.name)
			}
		})
	}
}
