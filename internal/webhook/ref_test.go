package webhook

import (
	"encoding/json"
	"strings"
	"testing"
)

// The scanner finds what encoding/json finds in the payloads the hosts
// send, whichever way the body is cut into writes.
func TestRefScannerAgreesWithEncodingJSON(t *testing.T) {
	for _, body := range []string{
		string(pushBody("refs/heads/main")),
		`{"before":"x","commits":[{"ref":"refs/heads/evil","m":"a \"ref\": b"}],"ref":"refs/heads/main"}`,
		`{"repository":{"ref":"refs/heads/nested"},"ref" : "refs/heads/spaced"}`,
		`{"ref":"refs/heads/caf\u00e9\"q"}`,
		`{"message":"{\"ref\":\"refs/heads/fake\"}","ref":"refs/heads/real"}`,
		`{"ref":"refs/heads/first","ref":"refs/heads/last"}`,
		`{"ref":null}`,
		`{"ref":12,"x":"refs/heads/main"}`,
		`{}`,
		`{"ref":`,
		`{"ref":"refs/heads/main"`,
		`["ref","refs/heads/main"]`,
		`{"ref":"` + strings.Repeat("a", maxRefBytes+1) + `"}`,
	} {
		var want struct {
			Ref string `json:"ref"`
		}
		if json.Unmarshal([]byte(body), &want) != nil || len(want.Ref) > maxRefBytes {
			want.Ref = ""
		}
		for _, cut := range []int{1, 3, len(body)} {
			s := &refScanner{}
			for i := 0; i < len(body); i += cut {
				_, _ = s.Write([]byte(body[i:min(i+cut, len(body))]))
			}
			if got := s.Ref(); got != want.Ref {
				t.Errorf("%.60s in writes of %d: ref %q, want %q", body, cut, got, want.Ref)
			}
		}
	}
}
