package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/install"
)

// installFormats are the values of install's -o.
var installFormats = []string{"yaml", "json"}

type installOptions struct {
	install.Options
	credentials install.CredentialFiles
	dryRun      bool
	output      string
	kube        kubeconfigOptions
}

func newInstallCommand() *cobra.Command {
	o := &installOptions{Options: install.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "install --repo URL",
		Short: "Print or apply (server-side) the controller manifests for a hub cluster",
		Long: `install builds deploy/ (the kustomize base embedded in this binary: the
Work CRD, namespace, RBAC, controller Deployment, Service, PodDisruptionBudget
and NetworkPolicy) for the given repository and applies it to the cluster of
the current kubeconfig context with server-side apply (field manager
"propagit"). With --dry-run it prints the manifests instead; without a
kubeconfig it fails rather than pretend. Every object carries the label
propagit.io/install=NAMESPACE, which uninstall goes by.

The Git credential: with --git-token-file (HTTPS) or --git-ssh-key and
--known-hosts (ssh:// or user@host:path), install stores it in Secret
propagit-git before the Deployment, and the pods wait for that Secret; it is
never printed. Over SSH the key is mounted from that Secret, so create it
yourself when you do not pass the files. Without a credential over HTTPS the
controller reads a public repository (create Secret propagit-git, key token,
for a private one, before install). The webhook secret (--webhook-secret NAME:
Secret NAME, key github-secret, gitlab-token or token) and the member
credentials (namespace karmada-cluster, as in Karmada) are yours to create.`,
		Example: `  propagit install --repo https://git.example.com/fleet.git --dry-run -o yaml > propagit.yaml
  propagit install --repo https://git.example.com/fleet.git --path clusters/prod \
    --webhook-secret propagit-webhook --image registry.example.com/propagit:v0.3.0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Repo, "repo", "", "the Git repository the controller follows (https://, ssh:// or user@host:path)")
	f.StringVar(&o.credentials.Token, "git-token-file", "", "file holding a Git token for an HTTPS repository (stored in Secret propagit-git, never printed)")
	f.StringVar(&o.credentials.SSHKey, "git-ssh-key", "", "private key file for an SSH repository (stored in Secret propagit-git with --known-hosts)")
	f.StringVar(&o.credentials.KnownHosts, "known-hosts", "", "known_hosts file holding the SSH host keys the controller may trust")
	f.StringVar(&o.Branch, "branch", o.Branch, "branch to follow")
	f.StringVar(&o.Path, "path", "", "folder inside the repository holding the fleet (default: the root)")
	f.StringVar(&o.WorksStore, "works-store", o.WorksStore, `where Works are recorded: "git" (the work branch agents read) or "cr" (Work custom resources on this cluster)`)
	f.StringVar(&o.WebhookSecret, "webhook-secret", "", "name of a Secret in --controller-namespace holding the webhook secret (enables the Git webhook)")
	f.StringVar(&o.WebhookProvider, "webhook-provider", o.WebhookProvider, `webhook kind: "github" (key github-secret), "gitlab" (key gitlab-token) or "generic" (key token)`)
	f.Int32Var(&o.Replicas, "replicas", o.Replicas, "controller replicas (one leads, the others stand by; with --shard they split the members)")
	f.BoolVar(&o.Shard, "shard", o.Shard, "run the replicas with --shard: each applies to its share of the push members, through Leases")
	f.StringVar(&o.Image, "image", defaultInstallImage(), "controller image")
	bindControllerNamespace(f, &o.Namespace, o.Namespace, "namespace of the controller")
	f.BoolVar(&o.ServiceMonitor, "service-monitor", false, "add a ServiceMonitor (needs the Prometheus Operator's CRD)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the manifests, apply nothing")
	bindFormat(cmd, &o.output, "yaml", installFormats, "format of the printed manifests")
	o.kube.bindFlags(f, "", "the hub", "the in-cluster config, then ~/.kube/config")
	return cmd
}

// defaultInstallImage is the release image of this binary's version; a
// development build has none, so --image is required then (never :latest,
// which would run whatever was pushed last).
func defaultInstallImage() string {
	v := resolveVersion(version, commit, nil).Version
	if !strings.HasPrefix(v, "v") {
		return ""
	}
	return install.DefaultImageRepository + ":" + v
}

func (o *installOptions) run(cmd *cobra.Command) error {
	cred, err := install.ReadGitCredential(o.Repo, o.credentials)
	if err != nil {
		return err
	}
	o.RequireGitSecret = cred != nil
	objs, err := install.Build(o.Options)
	if err != nil {
		return err
	}
	if o.dryRun {
		if cred != nil || install.IsSSH(o.Repo) {
			fmt.Fprintf(cmd.ErrOrStderr(), "not printed: %s (keys %s), which the pods wait for; install without --dry-run "+
				"creates it from the credential files, or create it yourself\n", secretDisplay(o.Namespace, install.GitSecretName), gitSecretKeys(o.Repo))
		}
		if o.output == "json" {
			return install.WriteJSON(cmd.OutOrStdout(), objs)
		}
		return install.WriteYAML(cmd.OutOrStdout(), objs)
	}
	cfg, err := requireConfig(o.kube)
	if err != nil {
		return fmt.Errorf("%w (to print the manifests instead, pass --dry-run)", err)
	}
	if cred != nil {
		objs = install.WithSecret(objs, cred.Secret(o.Namespace))
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("failed to connect to %s: %w", cfg.Host, err)
	}
	out := cmd.OutOrStdout()
	err = install.Apply(cmd.Context(), c, objs, func(ref string) { fmt.Fprintf(out, "%s serverside-applied\n", ref) })
	if err != nil {
		return err
	}
	next := "create the member credential Secrets in karmada-cluster"
	if cred == nil && !install.IsSSH(o.Repo) {
		next = fmt.Sprintf("for a private repository, create Secret %s/%s (key token, a Git token that may push the work branch) and restart the pods; ", o.Namespace, install.GitSecretName) + next
	} else if cred == nil {
		next = fmt.Sprintf("create Secret %s/%s (keys %s): the pods wait for it; ", o.Namespace, install.GitSecretName, gitSecretKeys(o.Repo)) + next
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "next: "+next)
	return nil
}

// gitSecretKeys names the keys of Secret propagit-git for repo.
func gitSecretKeys(repo string) string {
	if install.IsSSH(repo) {
		return "identity and known_hosts"
	}
	return "token"
}
