package cli

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"

	"github.com/propagit/propagit/internal/notify"
)

// notifyOptions are the controller's rollout notifications. Tokens and
// webhook URLs (which carry their secret) are read from files, never
// flags, so they stay out of process listings.
type notifyOptions struct {
	githubRepo, githubURL, githubTokenFile    string
	gitlabProject, gitlabURL, gitlabTokenFile string
	webhookURLFile                            string
	context, targetURL                        string
}

func (o *notifyOptions) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.githubRepo, "notify-github-repo", "", "set a commit status per revision on this GitHub repository (owner/name)")
	fs.StringVar(&o.githubURL, "notify-github-url", "https://api.github.com", "GitHub API root (GitHub Enterprise: https://HOST/api/v3)")
	fs.StringVar(&o.githubTokenFile, "notify-github-token-file", "", "file holding a GitHub token allowed to write commit statuses")
	fs.StringVar(&o.gitlabProject, "notify-gitlab-project", "", "set a commit status per revision on this GitLab project (ID or group/name)")
	fs.StringVar(&o.gitlabURL, "notify-gitlab-url", "https://gitlab.com", "GitLab root URL")
	fs.StringVar(&o.gitlabTokenFile, "notify-gitlab-token-file", "", "file holding a GitLab token allowed to write commit statuses")
	fs.StringVar(&o.webhookURLFile, "notify-webhook-url-file", "", "file holding a URL that receives a Slack-compatible JSON message per rollout change")
	fs.StringVar(&o.context, "notify-context", notify.DefaultContext, "name of the commit status")
	fs.StringVar(&o.targetURL, "notify-target-url", "", "link shown with the commit status (a dashboard, say)")
}

// notifier builds the Notifier the flags ask for; nil when none.
func (o *notifyOptions) notifier(log logr.Logger) (*notify.Notifier, error) {
	client := &http.Client{Timeout: 15 * time.Second}
	var sinks []notify.Sink
	if o.githubRepo != "" {
		owner, repo, ok := strings.Cut(o.githubRepo, "/")
		if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
			return nil, fmt.Errorf("--notify-github-repo %q: want owner/name", o.githubRepo)
		}
		token, err := readSecretFile("--notify-github-token-file", o.githubTokenFile)
		if err != nil {
			return nil, err
		}
		sinks = append(sinks, &notify.GitHub{BaseURL: o.githubURL, Owner: owner, Repo: repo, Token: token,
			Context: o.context, TargetURL: o.targetURL, Client: client})
	}
	if o.gitlabProject != "" {
		token, err := readSecretFile("--notify-gitlab-token-file", o.gitlabTokenFile)
		if err != nil {
			return nil, err
		}
		sinks = append(sinks, &notify.GitLab{BaseURL: o.gitlabURL, Project: o.gitlabProject, Token: token,
			Context: o.context, TargetURL: o.targetURL, Client: client})
	}
	if o.webhookURLFile != "" {
		u, err := readSecretFile("--notify-webhook-url-file", o.webhookURLFile)
		if err != nil {
			return nil, err
		}
		sinks = append(sinks, &notify.Webhook{URL: u, Client: client})
	}
	if len(sinks) == 0 {
		return nil, nil
	}
	return notify.New(log, 20*time.Second, sinks...), nil
}

func readSecretFile(flag, file string) (string, error) {
	if file == "" {
		return "", fmt.Errorf("%s is required with it", flag)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s: %s is empty", flag, file)
	}
	return s, nil
}
