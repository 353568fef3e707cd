package secrets

import (
	"regexp"
	"slices"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// maxKeys bounds the age keys of a document (all groups together): each
// is an age header tried with every identity.
const maxKeys = 64

// ageKey is one age stanza of the sops section: the data key (or a
// Shamir share of it), age-encrypted and armored, to recipient.
type ageKey struct {
	Recipient string `yaml:"recipient"`
	Enc       string `yaml:"enc"`
}

// keyGroup is a key group as sops writes it: only its age keys are read;
// the key types propagit never uses are only named in errors.
type keyGroup struct {
	Age     []ageKey `yaml:"age"`
	PGP     []any    `yaml:"pgp"`
	KMS     []any    `yaml:"kms"`
	GCPKMS  []any    `yaml:"gcp_kms"`
	AzureKV []any    `yaml:"azure_kv"`
	HCVault []any    `yaml:"hc_vault"`
	HCKMS   []any    `yaml:"hckms"`
}

// others names the key types of g other than age.
func (g *keyGroup) others() []string {
	var out []string
	for _, t := range []struct {
		name string
		keys []any
	}{{"pgp", g.PGP}, {"kms", g.KMS}, {"gcp_kms", g.GCPKMS}, {"azure_kv", g.AzureKV}, {"hc_vault", g.HCVault}, {"hckms", g.HCKMS}} {
		if len(t.keys) > 0 {
			out = append(out, t.name)
		}
	}
	return out
}

// metadata is the part of a document's sops section the reader uses.
type metadata struct {
	keyGroup        `yaml:",inline"`
	KeyGroups       []keyGroup `yaml:"key_groups"`
	ShamirThreshold int        `yaml:"shamir_threshold"`
	LastModified    string     `yaml:"lastmodified"`
	MAC             string     `yaml:"mac"`
	MACOnly         bool       `yaml:"mac_only_encrypted"`

	UnencryptedSuffix string `yaml:"unencrypted_suffix"`
	EncryptedSuffix   string `yaml:"encrypted_suffix"`
	UnencryptedRegex  string `yaml:"unencrypted_regex"`
	EncryptedRegex    string `yaml:"encrypted_regex"`
	UnencryptedCRegex string `yaml:"unencrypted_comment_regex"`
	EncryptedCRegex   string `yaml:"encrypted_comment_regex"`

	// groups are the key groups in effect: the top-level keys as one
	// group, or key_groups.
	groups []keyGroup
	// modified is lastmodified as sops formats it for the MAC's
	// additional data.
	modified string
	// rule decides which paths hold encrypted values.
	rule rule
}

// readMetadata decodes and checks the sops section n.
func readMetadata(n *yaml.Node) (*metadata, error) {
	var m metadata
	if err := n.Decode(&m); err != nil {
		return nil, malformed("sops section at line %d: %v", n.Line, err)
	}
	t, err := time.Parse(time.RFC3339, m.LastModified)
	if err != nil {
		return nil, malformed("sops.lastmodified is not an RFC 3339 time")
	}
	m.modified = t.Format(time.RFC3339)
	top := len(m.Age) > 0 || len(m.others()) > 0
	switch {
	case top && len(m.KeyGroups) > 0:
		return nil, malformed("sops has both top-level keys and key_groups")
	case top:
		m.groups = []keyGroup{m.keyGroup}
	case len(m.KeyGroups) > 0:
		m.groups = m.KeyGroups
	default:
		return nil, malformed("sops lists no keys")
	}
	if err := m.checkKeys(); err != nil {
		return nil, err
	}
	if m.EncryptedCRegex != "" || m.UnencryptedCRegex != "" {
		return nil, unsupported("sops.encrypted_comment_regex and unencrypted_comment_regex are not read by propagit; encrypt with --encrypted-regex '^(data|stringData)$'")
	}
	m.rule, err = newRule(&m)
	return &m, err
}

// checkKeys bounds the age keys and the Shamir threshold.
func (m *metadata) checkKeys() error {
	n := 0
	for _, g := range m.groups {
		if n += len(g.Age); n > maxKeys {
			return malformed("sops lists more than %d age keys", maxKeys)
		}
	}
	if m.ShamirThreshold < 0 || m.ShamirThreshold > len(m.groups) {
		return malformed("sops.shamir_threshold is %d with %d key groups", m.ShamirThreshold, len(m.groups))
	}
	return nil
}

// keys lists the age recipients and the other key types of the document,
// each sorted and without duplicates.
func (m *metadata) keys() (recipients, others []string) {
	for _, g := range m.groups {
		for _, k := range g.Age {
			recipients = append(recipients, k.Recipient)
		}
		others = append(others, g.others()...)
	}
	slices.Sort(recipients)
	slices.Sort(others)
	return slices.Compact(recipients), slices.Compact(others)
}

// rule is sops' choice of the values to encrypt: by key suffix or regex
// (one of them; a path is encrypted when a key on it matches, or when none
// does for the "unencrypted" rules).
type rule struct {
	suffix string
	re     *regexp.Regexp
	// encrypt is true for encrypted_suffix and encrypted_regex.
	encrypt bool
}

// newRule reads the one rule of m, sops' default (unencrypted_suffix
// "_unencrypted") when there is none.
func newRule(m *metadata) (rule, error) {
	var set []rule
	for _, s := range []struct {
		name, v  string
		re, encr bool
	}{
		{"unencrypted_suffix", m.UnencryptedSuffix, false, false}, {"encrypted_suffix", m.EncryptedSuffix, false, true},
		{"unencrypted_regex", m.UnencryptedRegex, true, false}, {"encrypted_regex", m.EncryptedRegex, true, true},
	} {
		switch {
		case s.v == "":
			continue
		case !s.re:
			set = append(set, rule{suffix: s.v, encrypt: s.encr})
			continue
		case len(s.v) > maxRegex:
			return rule{}, malformed("sops.%s is %d bytes, more than %d", s.name, len(s.v), maxRegex)
		}
		re, err := regexp.Compile(s.v)
		if err != nil {
			return rule{}, malformed("sops.%s: %v", s.name, err)
		}
		set = append(set, rule{re: re, encrypt: s.encr})
	}
	switch len(set) {
	case 0:
		return rule{suffix: "_unencrypted"}, nil
	case 1:
		return set[0], nil
	}
	return rule{}, malformed("sops sets more than one of the suffix and regex rules")
}

// encrypted reports whether the value at path is encrypted.
func (r rule) encrypted(path []string) bool {
	return slices.ContainsFunc(path, r.matches) == r.encrypt
}

func (r rule) matches(key string) bool {
	if r.re != nil {
		return r.re.MatchString(key)
	}
	return len(key) >= len(r.suffix) && key[len(key)-len(r.suffix):] == r.suffix
}
