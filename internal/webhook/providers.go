package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
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

// githubAuth streams the body through its HMAC and a ref scanner, then
// checks the signature; it returns the payload's ref.
func (h *handler) githubAuth(w http.ResponseWriter, r *http.Request) (string, *verdict) {
	if len(h.opts.GitHubSecret) == 0 {
		return "", &unauthorized
	}
	mac := hmac.New(sha256.New, h.opts.GitHubSecret)
	scan := &refScanner{}
	if v := readBody(w, r, io.MultiWriter(mac, scan)); v != nil {
		return "", v
	}
	if !validGitHubSignature(mac.Sum(nil), r.Header.Get(headerGitHubSignature)) {
		return "", &unauthorized
	}
	return scan.Ref(), nil
}

// github answers an authenticated event: a ping 200, a push to the followed
// branch accepted, anything else ignored.
func (h *handler) github(r *http.Request, ref string) verdict {
	switch event := r.Header.Get(headerGitHubEvent); event {
	case "ping":
		return ignored(http.StatusOK, "ping")
	case "push":
		return h.push("github", ref)
	default:
		return ignored(http.StatusAccepted, "event "+event)
	}
}

// validGitHubSignature reports whether header is "sha256=" followed by the
// hex of sum, the body's HMAC-SHA256, compared in constant time.
func validGitHubSignature(sum []byte, header string) bool {
	hexSum, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil {
		return false
	}
	return hmac.Equal(got, sum)
}

// gitlabAuth checks the token before reading the body; it returns the
// payload's ref.
func (h *handler) gitlabAuth(w http.ResponseWriter, r *http.Request) (string, *verdict) {
	if !tokenEqual(h.opts.GitLabToken, r.Header.Get(headerGitLabToken)) {
		return "", &unauthorized
	}
	scan := &refScanner{}
	if v := readBody(w, r, scan); v != nil {
		return "", v
	}
	return scan.Ref(), nil
}

// gitlab answers an authenticated event; only push events count.
func (h *handler) gitlab(r *http.Request, ref string) verdict {
	if event := r.Header.Get(headerGitLabEvent); event != gitLabPushEvent {
		return ignored(http.StatusAccepted, "event "+event)
	}
	return h.push("gitlab", ref)
}

// genericAuth checks the bearer token; the body is read, bounded, and
// discarded.
func (h *handler) genericAuth(w http.ResponseWriter, r *http.Request) *verdict {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") || !tokenEqual(h.opts.GenericToken, strings.TrimSpace(token)) {
		return &unauthorized
	}
	return readBody(w, r, io.Discard)
}

// push accepts a push (GitHub's and GitLab's payloads share the ref field)
// to the followed branch.
func (h *handler) push(provider, ref string) verdict {
	if ref == "" {
		return badRequest(http.StatusBadRequest, "push payload without a ref")
	}
	if !h.wantsRef(ref) {
		return ignored(http.StatusAccepted, "push to "+ref)
	}
	return accepted(provider + " push to " + ref)
}
