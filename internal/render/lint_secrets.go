package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/secrets/sealed"
)

// LintOptions turn on the lint checks a fleet opts into.
type LintOptions struct {
	// RequireEncryptedSecrets reports every Secret that is not
	// SOPS-encrypted (--require-encrypted-secrets).
	RequireEncryptedSecrets bool
	// Root is the fleet's folder, where a finding about the whole fleet
	// (an empty render) points.
	Root string
	// ReadFile reads a file of the fleet by its Source path, so that a
	// finding about a field points at the field's line (see locator); nil
	// leaves findings at their document's first line. It is the caller's
	// to bound what it reads: the file is Git content.
	ReadFile func(path string) ([]byte, error)
}

// lintSecrets reports plain Secrets when encryption is required, and
// encrypted objects sent to a cluster that could not decrypt them: one
// whose workv1alpha1.AnnotationAgeRecipient names none of the object's
// age recipients.
func lintSecrets(res *Result, opts LintOptions) []Finding {
	recipients := map[string][]string{}
	for _, c := range res.Clusters {
		recipients[c.Name] = clusterRecipients(c)
	}
	var out []Finding
	for _, b := range res.Bindings {
		if b.Template == nil {
			continue
		}
		obj := b.Template.Object
		add := func(rule, format string, args ...any) {
			out = append(out, Finding{Severity: SeverityError, Rule: rule, Finding: load.Finding{Source: b.Template.Source, Message: fmt.Sprintf(format, args...)}})
		}
		if !sealed.IsEncrypted(obj.Object) {
			if opts.RequireEncryptedSecrets && obj.GetKind() == "Secret" && obj.GetAPIVersion() == "v1" {
				add(RulePlainSecret, "%s is not SOPS-encrypted, and --require-encrypted-secrets asks every Secret to be (sops encrypt --age … --encrypted-regex '^(data|stringData)$')", b.Key.Display())
			}
			continue
		}
		has := sealed.Recipients(obj.Object)
		for _, t := range b.Targets {
			want := recipients[t.Cluster]
			if t.Object == nil || len(want) == 0 || slices.ContainsFunc(want, func(r string) bool { return slices.Contains(has, r) }) {
				continue
			}
			add(RuleSecretRecipient, "%s is sent to cluster %s, which decrypts with %s, but it is encrypted only to %s: the member cannot decrypt it",
				b.Key.Display(), t.Cluster, strings.Join(want, ", "), orNoRecipient(has))
		}
	}
	return out
}

// clusterRecipients reads c's AnnotationAgeRecipient.
func clusterRecipients(c *clusterv1alpha1.Cluster) []string {
	var out []string
	for _, r := range strings.Split(c.Annotations[workv1alpha1.AnnotationAgeRecipient], ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

func orNoRecipient(rs []string) string {
	if len(rs) == 0 {
		return "no age recipient"
	}
	return strings.Join(rs, ", ")
}
