package verify

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"golang.org/x/crypto/ssh"
)

// Limits bound what is read from a key file and from Git.
type Limits struct {
	// MaxKeyBytes bounds a trusted-keys file (or the files of a folder,
	// together).
	MaxKeyBytes int64
	// MaxKeys bounds the keys of a trusted-keys file: rotation needs two
	// or three, a team a few dozen.
	MaxKeys int
	// MaxSignatureBytes bounds one commit's signature; real ones are under
	// 2 KiB (RSA-4096 OpenPGP) and 500 bytes (SSH ed25519).
	MaxSignatureBytes int
	// MaxCommits bounds the commits one range verification reads.
	MaxCommits int
	// MaxCommitBytes bounds a commit object, checked before it is
	// decoded.
	MaxCommitBytes int64
}

// DefaultLimits returns the limits propagit uses.
func DefaultLimits() Limits {
	return Limits{MaxKeyBytes: 1 << 20, MaxKeys: 256, MaxSignatureBytes: 64 << 10, MaxCommits: 10000, MaxCommitBytes: 1 << 20}
}

// Keys are the trusted keys: OpenPGP public keys and SSH allowed signers.
type Keys struct {
	pgp openpgp.EntityList
	ssh []sshKey
}

// sshKey is one allowed_signers line.
type sshKey struct {
	principals string
	key        ssh.PublicKey
	// namespaces are the patterns of the namespaces="…" option; nil
	// allows every namespace.
	namespaces []string
	// validAfter and validBefore are the key's window (zero: open).
	validAfter, validBefore time.Time
}

// Len returns how many keys there are.
func (k *Keys) Len() int {
	if k == nil {
		return 0
	}
	return len(k.pgp) + len(k.ssh)
}

// Describe lists the keys, one per line: "openpgp FINGERPRINT identity" or
// "ssh SHA256:… principals".
func (k *Keys) Describe() []string {
	var out []string
	for _, e := range k.pgp {
		out = append(out, "openpgp "+pgpName(e))
	}
	for _, s := range k.ssh {
		out = append(out, "ssh "+ssh.FingerprintSHA256(s.key)+" "+s.principals)
	}
	return out
}

// Markers of OpenPGP armored blocks.
const (
	pgpPublicBegin  = "-----BEGIN PGP PUBLIC KEY BLOCK-----"
	pgpPublicEnd    = "-----END PGP PUBLIC KEY BLOCK-----"
	pgpPrivateBegin = "-----BEGIN PGP PRIVATE KEY BLOCK-----"
	sshPrivateBegin = "-----BEGIN OPENSSH PRIVATE KEY-----"
)

// ReadKeys reads the trusted keys at path: a file, or a folder whose
// regular files (a mounted Secret's keys; names starting with "." are
// skipped) are read in name order. Together they may hold at most
// limits.MaxKeyBytes bytes and limits.MaxKeys keys.
func ReadKeys(path string, limits Limits) (*Keys, error) {
	data, err := readKeyFiles(path, limits.MaxKeyBytes)
	if err != nil {
		return nil, err
	}
	k, err := ParseKeys(data, limits)
	if err != nil {
		return nil, fmt.Errorf("trusted keys %s: %w", path, err)
	}
	return k, nil
}

// readKeyFiles returns the content of path, or of the files of the folder
// path, at most max bytes in all.
func readKeyFiles(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read trusted keys: %w", err)
	}
	files := []string{path}
	if fi.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("failed to read trusted keys: %w", err)
		}
		files = files[:0]
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue // a mounted Secret's ..data and its timestamped folder
			}
			p := filepath.Join(path, e.Name())
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				files = append(files, p)
			}
		}
		sort.Strings(files)
	}
	var buf bytes.Buffer
	for _, p := range files {
		if err := appendFile(&buf, p, max); err != nil {
			return nil, err
		}
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// appendFile appends p to buf unless buf would exceed max bytes.
func appendFile(buf *bytes.Buffer, p string, max int64) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("failed to read trusted keys: %w", err)
	}
	defer f.Close()
	room := max - int64(buf.Len())
	n, err := io.Copy(buf, io.LimitReader(f, room+1))
	if err != nil {
		return fmt.Errorf("failed to read trusted keys %s: %w", p, err)
	}
	if n > room {
		return fail(ErrTooLarge, "trusted keys %s: larger than %d bytes", p, max)
	}
	return nil
}

// ParseKeys parses trusted keys: OpenPGP armored public key blocks and
// SSH allowed_signers lines ("principals [options] keytype base64
// [comment]"), in any order; blank lines and lines starting with # are
// skipped. A private key is refused: a trusted-keys file is public.
func ParseKeys(data []byte, limits Limits) (*Keys, error) {
	if limits.MaxKeyBytes > 0 && int64(len(data)) > limits.MaxKeyBytes {
		return nil, fail(ErrTooLarge, "%d bytes, more than %d", len(data), limits.MaxKeyBytes)
	}
	blocks, lines, err := splitKeys(data)
	if err != nil {
		return nil, err
	}
	// Counted before anything is parsed: thousands of keys are refused
	// at the cost of one scan.
	if n := len(blocks) + len(lines); limits.MaxKeys > 0 && n > limits.MaxKeys {
		return nil, fail(ErrTooManyKeys, "%d keys, more than %d", n, limits.MaxKeys)
	}
	k := &Keys{}
	for _, b := range blocks {
		el, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(b.text))
		if err != nil {
			return nil, fmt.Errorf("line %d: not an OpenPGP public key: %w", b.line, err)
		}
		k.pgp = append(k.pgp, el...)
	}
	for _, l := range lines {
		s, err := parseAllowedSigner(l.text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", l.line, err)
		}
		k.ssh = append(k.ssh, s)
	}
	if n := k.Len(); limits.MaxKeys > 0 && n > limits.MaxKeys {
		return nil, fail(ErrTooManyKeys, "%d keys, more than %d", n, limits.MaxKeys)
	}
	if k.Len() == 0 {
		return nil, errors.New("no key: want OpenPGP armored public keys or SSH allowed_signers lines")
	}
	return k, nil
}

// chunk is a piece of a key file and the line it starts on.
type chunk struct {
	line int
	text []byte
}

// splitKeys splits a key file into OpenPGP armored blocks and other
// lines, refusing private keys.
func splitKeys(data []byte) (blocks, lines []chunk, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), len(data)+1)
	var block *chunk
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case block != nil:
			block.text = append(append(block.text, line...), '\n')
			if line == pgpPublicEnd {
				blocks, block = append(blocks, *block), nil
			}
		case line == pgpPrivateBegin || line == sshPrivateBegin || strings.HasPrefix(line, "-----BEGIN") && strings.Contains(line, "PRIVATE KEY"):
			return nil, nil, fmt.Errorf("line %d: a private key; trusted keys are public keys only", n)
		case line == pgpPublicBegin:
			block = &chunk{line: n, text: []byte(line + "\n")}
		case line == "" || strings.HasPrefix(line, "#"):
		default:
			lines = append(lines, chunk{line: n, text: []byte(line)})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if block != nil {
		return nil, nil, fmt.Errorf("line %d: OpenPGP public key block without its end line", block.line)
	}
	return blocks, lines, nil
}
