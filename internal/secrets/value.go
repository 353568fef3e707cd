package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// sealedValue is one ENC[AES256_GCM,data:…,iv:…,tag:…,type:…] value.
type sealedValue struct {
	data, iv, tag []byte
	typ           string
}

// comment is a decrypted value of type comment: sops encrypts comments
// in encrypted lists as list items; they are neither values nor MAC input.
type comment struct{}

// parseValue splits s into its fields, as sops writes them: base64 data,
// a 32-byte IV and a 16-byte tag.
func parseValue(s string) (*sealedValue, error) {
	body, ok := strings.CutPrefix(s, "ENC[AES256_GCM,")
	if body, ok = strings.CutSuffix(body, "]"); !ok {
		return nil, malformed("not an ENC[AES256_GCM,…] value")
	}
	f := strings.Split(body, ",")
	if len(f) != 4 {
		return nil, malformed("an ENC value without exactly data, iv, tag and type")
	}
	var v sealedValue
	dst := []*[]byte{&v.data, &v.iv, &v.tag}
	for i, name := range []string{"data:", "iv:", "tag:"} {
		b64, ok := strings.CutPrefix(f[i], name)
		if !ok {
			return nil, malformed("an ENC value without %s", strings.TrimSuffix(name, ":"))
		}
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, malformed("an ENC value whose %s is not base64", strings.TrimSuffix(name, ":"))
		}
		*dst[i] = b
	}
	v.typ, ok = strings.CutPrefix(f[3], "type:")
	switch {
	case !ok:
		return nil, malformed("an ENC value without type")
	case len(v.iv) != 32 || len(v.tag) != 16:
		return nil, malformed("an ENC value with a %d-byte IV and a %d-byte tag, not 32 and 16", len(v.iv), len(v.tag))
	}
	return &v, nil
}

// openValue decrypts s, bound to aad (the path joined with ":", plus
// ":"), and converts it to its recorded type. "" is sops' empty value,
// never encrypted. The type is not authenticated: a wrong one is either
// malformed or, for comment, fails the MAC.
func openValue(s string, key []byte, aad string) (any, error) {
	if s == "" {
		return "", nil
	}
	v, err := parseValue(s)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, malformed("data key: %v", err)
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, len(v.iv))
	if err != nil {
		return nil, malformed("AES-GCM: %v", err)
	}
	plain, err := gcm.Open(nil, v.iv, append(v.data, v.tag...), []byte(aad))
	if err != nil {
		return nil, fmt.Errorf("%w: a value fails authentication (tampered, or moved to another path)", ErrMAC)
	}
	return typed(string(plain), v.typ)
}

// typed converts a decrypted value to its sops type without quoting it
// in an error.
func typed(s, typ string) (any, error) {
	var v any
	var err error
	switch typ {
	case "str":
		return s, nil
	case "int":
		v, err = strconv.ParseInt(s, 10, 64)
	case "float":
		v, err = strconv.ParseFloat(s, 64)
	case "bool":
		v, err = strconv.ParseBool(s)
	case "time":
		var t time.Time
		err = t.UnmarshalText([]byte(s))
		v = t
	case "comment":
		return comment{}, nil
	default:
		// bytes included: sops reads it but never writes it.
		return nil, malformed("an ENC value of a type sops does not write")
	}
	if err != nil {
		return nil, malformed("an ENC value that does not parse as its type %s", typ)
	}
	return v, nil
}

// macBytes is what sops hashes for a value: its text, booleans as True
// and False, floats without exponent.
func macBytes(v any) []byte {
	switch v := v.(type) {
	case string:
		return []byte(v)
	case int64:
		return strconv.AppendInt(nil, v, 10)
	case float64:
		return strconv.AppendFloat(nil, v, 'f', -1, 64)
	case bool:
		if v {
			return []byte("True")
		}
		return []byte("False")
	case time.Time:
		b, _ := v.MarshalText()
		return b
	}
	return nil
}
