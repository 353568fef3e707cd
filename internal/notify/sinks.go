package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// DefaultContext names propagit's commit status on the Git host.
const DefaultContext = "propagit"

// GitHub sets a commit status through GitHub's REST API:
// POST {BaseURL}/repos/{owner}/{repo}/statuses/{sha} with a bearer token.
type GitHub struct {
	// BaseURL is https://api.github.com, or a GitHub Enterprise API root.
	BaseURL     string
	Owner, Repo string
	Token       string
	// Context names the status (DefaultContext when empty).
	Context string
	// TargetURL, when set, is linked from the status.
	TargetURL string
	Client    *http.Client
}

// Send implements Sink.
func (g *GitHub) Send(ctx context.Context, r Rollout) error {
	body := map[string]string{"state": r.State(), "description": r.Description(), "context": orDefault(g.Context)}
	if g.TargetURL != "" {
		body["target_url"] = g.TargetURL
	}
	u := fmt.Sprintf("%s/repos/%s/%s/statuses/%s", strings.TrimSuffix(g.BaseURL, "/"), url.PathEscape(g.Owner), url.PathEscape(g.Repo), url.PathEscape(r.Revision))
	return post(ctx, g.Client, u, redact(u, true), body, map[string]string{
		"Authorization": "Bearer " + g.Token, "Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"})
}

// GitLab sets a commit status through GitLab's REST API:
// POST {BaseURL}/api/v4/projects/{id}/statuses/{sha} with a PRIVATE-TOKEN.
type GitLab struct {
	// BaseURL is https://gitlab.com or a self-managed instance.
	BaseURL string
	// Project is the numeric ID or the full path ("group/fleet").
	Project string
	Token   string
	Context string
	// TargetURL, when set, is linked from the status.
	TargetURL string
	Client    *http.Client
}

// gitlabStates maps the rollout states to GitLab's (it says "failed" and
// "running", not "failure" and "pending").
var gitlabStates = map[string]string{StatePending: "running", StateSuccess: "success", StateFailure: "failed"}

// Send implements Sink.
func (g *GitLab) Send(ctx context.Context, r Rollout) error {
	body := map[string]string{"state": gitlabStates[r.State()], "description": r.Description(), "name": orDefault(g.Context)}
	if g.TargetURL != "" {
		body["target_url"] = g.TargetURL
	}
	u := fmt.Sprintf("%s/api/v4/projects/%s/statuses/%s", strings.TrimSuffix(g.BaseURL, "/"), url.PathEscape(g.Project), url.PathEscape(r.Revision))
	return post(ctx, g.Client, u, redact(u, true), body, map[string]string{"PRIVATE-TOKEN": g.Token})
}

// Webhook posts a Slack-compatible JSON message ({"text": …}, plus the
// rollout's fields) to any URL: Slack and Mattermost incoming webhooks,
// or a service of one's own.
type Webhook struct {
	URL    string
	Client *http.Client
}

// Send implements Sink.
func (w *Webhook) Send(ctx context.Context, r Rollout) error {
	body := map[string]any{
		"text":     fmt.Sprintf("%s: revision %s is %s", r.Description(), workv1alpha1.ShortRevision(r.Revision), r.State()),
		"revision": r.Revision, "state": r.State(), "total": r.Total, "healthy": r.Healthy, "failed": r.Failed,
	}
	return post(ctx, w.Client, w.URL, redact(w.URL, false), body, nil)
}

// post sends body as JSON to u. Errors name the URL as shown, never u
// itself: Go's *url.Error quotes the whole URL, query and path included.
// Redirects are not followed: Go's client forwards headers such as
// PRIVATE-TOKEN to whatever host a redirect names, and re-posts the body.
func post(ctx context.Context, c *http.Client, u, shown string, body any, header map[string]string) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("failed to post to %s: invalid URL", shown)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := noRedirects(c).Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("failed to post to %s: %w", shown, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode/100 == 3:
		return fmt.Errorf("post to %s: %s: redirects are not followed (they could carry the token to another host); "+
			"configure the URL it redirects to", shown, resp.Status)
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("post to %s: %s", shown, resp.Status)
	}
	return nil
}

// noRedirects returns a copy of c (http.DefaultClient when nil) that
// answers a redirect with the redirect response itself.
func noRedirects(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cc
}

// redact keeps the scheme, host and, with path, the path of u: a webhook
// URL's path (Slack's /services/T…/B…/token) and query may hold its
// secret; a Git host's API path holds none.
func redact(u string, path bool) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "(invalid URL)"
	}
	shown := &url.URL{Scheme: p.Scheme, Host: p.Host}
	if path {
		shown.Path = p.Path
	} else if p.Path != "" && p.Path != "/" {
		shown.Path = "/…"
	}
	return shown.String()
}

func orDefault(ctx string) string {
	if ctx == "" {
		return DefaultContext
	}
	return ctx
}
