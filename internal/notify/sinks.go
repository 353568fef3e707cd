package notify

import (
	"bytes"
	"context"
	"encoding/json"
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
	return post(ctx, g.Client, u, body, map[string]string{
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
	return post(ctx, g.Client, u, body, map[string]string{"PRIVATE-TOKEN": g.Token})
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
	return post(ctx, w.Client, w.URL, body, nil)
}

func post(ctx context.Context, c *http.Client, u string, body any, header map[string]string) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("failed to post to %s: %w", redact(u), err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("post to %s: %s", redact(u), resp.Status)
	}
	return nil
}

// redact keeps the scheme, host and path of u: a webhook URL's query may
// hold its secret.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(invalid URL)"
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}

func orDefault(ctx string) string {
	if ctx == "" {
		return DefaultContext
	}
	return ctx
}
