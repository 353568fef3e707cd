package secrets

import (
	"slices"

	"github.com/getsops/sops/v3"
	sopsage "github.com/getsops/sops/v3/age"
)

// masterKeys lists the age recipients of a document's key groups and the
// identifiers of its other key types (pgp, kms, …), each sorted.
func masterKeys(m *sops.Metadata) (recipients, others []string) {
	for _, g := range m.KeyGroups {
		for _, k := range g {
			if a, ok := k.(*sopsage.MasterKey); ok {
				recipients = append(recipients, a.Recipient)
			} else {
				others = append(others, k.TypeToIdentifier())
			}
		}
	}
	slices.Sort(recipients)
	slices.Sort(others)
	return slices.Compact(recipients), slices.Compact(others)
}
