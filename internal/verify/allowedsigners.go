package verify

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// parseAllowedSigner parses one allowed_signers line (ssh-keygen(1),
// ALLOWED SIGNERS): "principals [options] keytype base64 [comment]". The
// options namespaces, valid-after and valid-before are honoured;
// cert-authority (certificates) and any other option are refused rather
// than ignored.
func parseAllowedSigner(line []byte) (sshKey, error) {
	principals, rest, err := cutPrincipals(string(line))
	if err != nil {
		return sshKey{}, err
	}
	pub, _, options, _, err := ssh.ParseAuthorizedKey([]byte(rest))
	if err != nil {
		return sshKey{}, fmt.Errorf("not an allowed_signers line (principals [options] keytype key): %w", err)
	}
	if _, ok := pub.(*ssh.Certificate); ok {
		return sshKey{}, errors.New("SSH certificates are not supported; list the signing key itself")
	}
	s := sshKey{principals: principals, key: pub}
	for _, o := range options {
		if err := s.option(o); err != nil {
			return sshKey{}, err
		}
	}
	return s, nil
}

// cutPrincipals splits the principals field (quoted or not) from the rest
// of the line.
func cutPrincipals(line string) (string, string, error) {
	if strings.HasPrefix(line, `"`) {
		end := strings.Index(line[1:], `"`)
		if end < 0 {
			return "", "", errors.New("unterminated quoted principals")
		}
		return line[1 : end+1], strings.TrimSpace(line[end+2:]), nil
	}
	p, rest, ok := strings.Cut(line, " ")
	if !ok {
		p, rest, ok = strings.Cut(line, "\t")
	}
	if !ok || strings.TrimSpace(rest) == "" {
		return "", "", errors.New("not an allowed_signers line (principals [options] keytype key)")
	}
	return p, strings.TrimSpace(rest), nil
}

// option applies one allowed_signers option.
func (s *sshKey) option(o string) error {
	name, value, _ := strings.Cut(o, "=")
	value = strings.Trim(value, `"`)
	var err error
	switch strings.ToLower(name) {
	case "namespaces":
		s.namespaces = strings.Split(value, ",")
	case "valid-after":
		s.validAfter, err = parseSSHTime(value)
	case "valid-before":
		s.validBefore, err = parseSSHTime(value)
	case "cert-authority":
		return errors.New("cert-authority is not supported; list the signing keys themselves")
	default:
		return fmt.Errorf("unknown option %q", name)
	}
	if err != nil {
		return fmt.Errorf("option %s: %w", name, err)
	}
	return nil
}

// parseSSHTime parses YYYYMMDD[HHMM[SS]][Z] as ssh-keygen does: local
// time unless it ends in Z.
func parseSSHTime(v string) (time.Time, error) {
	loc := time.Local
	if s, ok := strings.CutSuffix(v, "Z"); ok {
		v, loc = s, time.UTC
	}
	for _, layout := range []string{"20060102", "200601021504", "20060102150405"} {
		if len(v) == len(layout) {
			return time.ParseInLocation(layout, v, loc)
		}
	}
	return time.Time{}, fmt.Errorf("%q: want YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, optionally ending in Z", v)
}

// allows reports whether the key may sign in namespace.
func (s *sshKey) allows(namespace string) bool {
	if s.namespaces == nil {
		return true
	}
	for _, p := range s.namespaces {
		if ok, _ := path.Match(strings.TrimSpace(p), namespace); ok {
			return true
		}
	}
	return false
}

// window returns why the key is not valid at now, or nil.
func (s *sshKey) window(now time.Time) error {
	switch {
	case !s.validAfter.IsZero() && now.Before(s.validAfter):
		return fail(ErrKeyExpired, "SSH key %s (%s) is not valid before %s", ssh.FingerprintSHA256(s.key), s.principals, s.validAfter.Format(time.RFC3339))
	case !s.validBefore.IsZero() && !now.Before(s.validBefore):
		return fail(ErrKeyExpired, "SSH key %s (%s) expired at %s", ssh.FingerprintSHA256(s.key), s.principals, s.validBefore.Format(time.RFC3339))
	}
	return nil
}
