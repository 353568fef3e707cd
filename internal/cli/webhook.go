package cli

import (
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/propagit/propagit/internal/controller"
	"github.com/propagit/propagit/internal/metrics"
	"github.com/propagit/propagit/internal/webhook"
)

// webhookOptions name the files holding the webhook secrets; secrets are
// never flags, so they do not show in process listings.
type webhookOptions struct {
	githubSecretFile string
	gitlabTokenFile  string
	tokenFile        string
}

func (w *webhookOptions) bindFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&w.githubSecretFile, "webhook-github-secret-file", "", "file holding the GitHub webhook secret (enables GitHub push events)")
	f.StringVar(&w.gitlabTokenFile, "webhook-gitlab-token-file", "", "file holding the GitLab webhook token (enables GitLab push hooks)")
	f.StringVar(&w.tokenFile, "webhook-token-file", "", "file holding a bearer token for the generic trigger")
}

func (w *webhookOptions) handler(branch string, c *controller.Controller, rec *metrics.Recorder, log logr.Logger) (http.Handler, error) {
	opts := webhook.DefaultOptions()
	opts.Branch = branch
	for _, f := range []struct {
		path string
		dst  *[]byte
	}{{w.githubSecretFile, &opts.GitHubSecret}, {w.gitlabTokenFile, &opts.GitLabToken}, {w.tokenFile, &opts.GenericToken}} {
		if f.path == "" {
			continue
		}
		b, err := os.ReadFile(f.path)
		if err != nil {
			return nil, fmt.Errorf("failed to read webhook secret: %w", err)
		}
		*f.dst = []byte(strings.TrimSpace(string(b)))
	}
	return webhook.NewHandler(opts, func(reason string) {
		log.Info("webhook: fetching now", "reason", reason)
		c.Trigger()
	}, rec), nil
}
