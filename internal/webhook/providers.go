package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
)

const (
	headerGitHubEvent     = "X-GitHub-Event"
	headerGitHubSignature = "X-Hub-Signature-256"
	headerGitLabEvent     = "X-Gitlab-Event"
	headerGitLabToken     = "X-Gitlab-Token"
	gitLabPushEvent       = "Push Hook"
)

// githubAuth reads the body and checks its HMAC.
func (h *handler) githubAuth(w http.ResponseWriter, r *http.Request) ([]byte, *verdict) {
	if len(h.opts.GitHubSecret) == 0 {
		return nil, &unauthorized
	}
	body, v := readBody(w, r)
	if v != nil {
		return nil, v
	}
	if !validGitHubSignature(h.opts.GitHubSecret, body, r.Header.Get(headerGitHubSignature)) {
		return nil, &unauthorized
	}
	return body, nil
}

// github answers an authenticated event: a ping 200, a push to the followed
// branch accepted, anything else ignored.
func (h *handler) github(r *http.Request, body []byte) verdict {
	switch event := r.Header.Get(headerGitHubEvent); event {
	case "ping":
		return ignored(http.StatusOK, "ping")
	case "push":
		return h.push("github", body)
	default:
		return ignored(http.StatusAccepted, "event "+event)
	}
}

// validGitHubSignature reports whether header is "sha256=" followed by the
// hex HMAC-SHA256 of body keyed with secret, compared in constant time.
func validGitHubSignature(secret, body []byte, header string) bool {
	hexSum, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// gitlabAuth checks the token before reading the body.
func (h *handler) gitlabAuth(w http.ResponseWriter, r *http.Request) ([]byte, *verdict) {
	if !tokenEqual(h.opts.GitLabToken, r.Header.Get(headerGitLabToken)) {
		return nil, &unauthorized
	}
	return readBody(w, r)
}

// gitlab answers an authenticated event; only push events count.
func (h *handler) gitlab(r *http.Request, body []byte) verdict {
	if event := r.Header.Get(headerGitLabEvent); event != gitLabPushEvent {
		return ignored(http.StatusAccepted, "event "+event)
	}
	return h.push("gitlab", body)
}

// genericAuth checks the bearer token; the body is read, bounded, and
// discarded.
func (h *handler) genericAuth(w http.ResponseWriter, r *http.Request) ([]byte, *verdict) {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") || !tokenEqual(h.opts.GenericToken, strings.TrimSpace(token)) {
		return nil, &unauthorized
	}
	_, v := readBody(w, r)
	return nil, v
}

// push accepts a push payload (GitHub's and GitLab's share the ref field)
// whose ref is the followed branch.
func (h *handler) push(provider string, body []byte) verdict {
	var payload struct {
		Ref string `json:"ref"`
	}
	if err := json.Unmarshal(body, &payload); err != nil || payload.Ref == "" {
		return badRequest(http.StatusBadRequest, "push payload without a ref")
	}
	if !h.wantsRef(payload.Ref) {
		return ignored(http.StatusAccepted, "push to "+payload.Ref)
	}
	return accepted(provider + " push to " + payload.Ref)
}
