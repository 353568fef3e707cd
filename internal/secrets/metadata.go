package secrets

import (
	"regexp"
	"slices"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// MetadataKey is the top-level key sops adds to every document it encrypts.
const MetadataKey = "sops"

// metadata is the part of the sops section propagit reads. Key types it
// cannot use are kept only to be named in errors.
type metadata struct {
	Age                     []ageKey   `yaml:"age"`
	KeyGroups               []keyGroup `yaml:"key_groups"`
	ShamirThreshold         int        `yaml:"shamir_threshold"`
	LastModified            string     `yaml:"lastmodified"`
	MAC                     string     `yaml:"mac"`
	UnencryptedSuffix       string     `yaml:"unencrypted_suffix"`
	EncryptedSuffix         string     `yaml:"encrypted_suffix"`
	UnencryptedRegex        string     `yaml:"unencrypted_regex"`
	EncryptedRegex          string     `yaml:"encrypted_regex"`
	UnencryptedCommentRegex string     `yaml:"unencrypted_comment_regex"`
	EncryptedCommentRegex   string     `yaml:"encrypted_comment_regex"`
	MACOnlyEncrypted        bool       `yaml:"mac_only_encrypted"`
	Version                 string     `yaml:"version"`
	otherKeys               `yaml:",inline"`
}

// keyGroup is one entry of key_groups.
type keyGroup struct {
	Age       []ageKey `yaml:"age"`
	otherKeys `yaml:",inline"`
}

// otherKeys are the master key types propagit does not decrypt with.
type otherKeys struct {
	PGP     []any `yaml:"pgp"`
	KMS     []any `yaml:"kms"`
	GCPKMS  []any `yaml:"gcp_kms"`
	AzureKV []any `yaml:"azure_kv"`
	HCVault []any `yaml:"hc_vault"`
	HCKMS   []any `yaml:"hckms"`
}

// names lists the key types present, for an error message.
func (o otherKeys) names() []string {
	var out []string
	for name, keys := range map[string][]any{"pgp": o.PGP, "kms": o.KMS, "gcp_kms": o.GCPKMS,
		"azure_kv": o.AzureKV, "hc_vault": o.HCVault, "hckms": o.HCKMS} {
		if len(keys) > 0 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// ageKey is one age recipient and the data key encrypted to it (an
// armored age file).
type ageKey struct {
	Recipient string `yaml:"recipient"`
	Enc       string `yaml:"enc"`
}

// ageKeys returns every age stanza, from the flat list and the one key
// group sops writes when no groups are configured. Several groups (Shamir
// secret sharing) are refused: each would hold only a share of the key.
func (m *metadata) ageKeys() ([]ageKey, error) {
	if len(m.KeyGroups) > 1 {
		return nil, unsupported("%d key groups (Shamir threshold %d): only one group of age keys is decrypted", len(m.KeyGroups), m.ShamirThreshold)
	}
	keys := slices.Clone(m.Age)
	for _, g := range m.KeyGroups {
		keys = append(keys, g.Age...)
	}
	if len(keys) == 0 {
		others := m.names()
		for _, g := range m.KeyGroups {
			others = append(others, g.names()...)
		}
		return nil, unsupported("no age key; the data key is encrypted only with %v, which propagit does not use", others)
	}
	return keys, nil
}

// recipients lists the age recipients, sorted.
func (m *metadata) recipients() []string {
	keys, _ := m.ageKeys()
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k.Recipient)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// lastModified is the MAC's additional data: the timestamp as sops formats
// it after parsing.
func (m *metadata) lastModified() (string, error) {
	t, err := time.Parse(time.RFC3339, m.LastModified)
	if err != nil {
		return "", malformed("sops.lastmodified %q is not an RFC 3339 time", m.LastModified)
	}
	return t.Format(time.RFC3339), nil
}

// selector says which values of the document are encrypted, by the
// document's suffix and regex settings, the way sops decides.
type selector struct {
	m                  *metadata
	unencRe, encRe     *regexp.Regexp
	hasUnencS, hasEncS bool
}

func newSelector(m *metadata) (*selector, error) {
	if m.UnencryptedCommentRegex != "" || m.EncryptedCommentRegex != "" {
		return nil, unsupported("comment regexes (unencrypted_comment_regex, encrypted_comment_regex) are not supported")
	}
	s := &selector{m: m, hasUnencS: m.UnencryptedSuffix != "", hasEncS: m.EncryptedSuffix != ""}
	var err error
	if m.UnencryptedRegex != "" {
		if s.unencRe, err = regexp.Compile(m.UnencryptedRegex); err != nil {
			return nil, malformed("sops.unencrypted_regex: %v", err)
		}
	}
	if m.EncryptedRegex != "" {
		if s.encRe, err = regexp.Compile(m.EncryptedRegex); err != nil {
			return nil, malformed("sops.encrypted_regex: %v", err)
		}
	}
	return s, nil
}

// encrypted reports whether the value at path is encrypted: by default
// all are; an unencrypted suffix or regex on any path element exempts it;
// an encrypted suffix or regex, when set, is required on one element.
func (s *selector) encrypted(path []string) bool {
	enc := true
	if s.hasUnencS && slices.ContainsFunc(path, func(p string) bool { return hasSuffix(p, s.m.UnencryptedSuffix) }) {
		enc = false
	}
	if s.hasEncS {
		enc = slices.ContainsFunc(path, func(p string) bool { return hasSuffix(p, s.m.EncryptedSuffix) })
	}
	if s.unencRe != nil && slices.ContainsFunc(path, s.unencRe.MatchString) {
		enc = false
	}
	if s.encRe != nil {
		enc = slices.ContainsFunc(path, s.encRe.MatchString)
	}
	return enc
}

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

// splitMetadata returns the document's top mapping and its decoded sops
// section; ok is false when the document has no sops mapping.
func splitMetadata(doc *yaml.Node) (top *yaml.Node, m *metadata, ok bool, err error) {
	top = doc
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	if top.Kind != yaml.MappingNode {
		return top, nil, false, nil
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != MetadataKey || top.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		m = &metadata{}
		if err := top.Content[i+1].Decode(m); err != nil {
			return top, nil, true, malformed("sops section (line %d): %v", top.Content[i].Line, err)
		}
		return top, m, true, nil
	}
	return top, nil, false, nil
}
