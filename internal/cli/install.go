package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/install"
)

type installOptions struct {
	install.Options
	dryRun     bool
	output     string
	kubeconfig string
	context    string
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
"propagit"). With --dry-run, or when no kubeconfig is found, it prints the
manifests instead.

No secret value is ever printed or applied: create Secret propagit-git (key
token, a Git token with write access to the work branch) and, with
--webhook-secret NAME, Secret NAME (key github-secret, gitlab-token or token)
yourself. Member credentials go in namespace karmada-cluster, as in Karmada.`,
		Example: `  propagit install --repo https://git.example.com/fleet.git --dry-run -o yaml > propagit.yaml
  propagit install --repo https://git.example.com/fleet.git --path clusters/prod \
    --webhook-secret propagit-webhook --image registry.example.com/propagit:v0.3.0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Repo, "repo", "", "the Git repository the controller follows (https:// or ssh://)")
	f.StringVar(&o.Branch, "branch", o.Branch, "branch to follow")
	f.StringVar(&o.Path, "path", "", "folder inside the repository holding the fleet (default: the root)")
	f.StringVar(&o.WorksStore, "works-store", o.WorksStore, `where Works are recorded: "git" (the work branch agents read) or "cr" (Work custom resources on this cluster)`)
	f.StringVar(&o.WebhookSecret, "webhook-secret", "", "name of a Secret in --namespace holding the webhook secret (enables the Git webhook)")
	f.StringVar(&o.WebhookProvider, "webhook-provider", o.WebhookProvider, `webhook kind: "github" (key github-secret), "gitlab" (key gitlab-token) or "generic" (key token)`)
	f.Int32Var(&o.Replicas, "replicas", o.Replicas, "controller replicas (one leads, the others stand by; with --shard they split the members)")
	f.BoolVar(&o.Shard, "shard", o.Shard, "run the replicas with --shard: each applies to its share of the push members, through Leases")
	f.StringVar(&o.Image, "image", defaultInstallImage(), "controller image")
	f.StringVarP(&o.Namespace, "namespace", "n", o.Namespace, "namespace of the controller")
	f.BoolVar(&o.ServiceMonitor, "service-monitor", false, "add a ServiceMonitor (needs the Prometheus Operator's CRD)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the manifests, apply nothing")
	f.StringVarP(&o.output, "output", "o", "yaml", `format of the printed manifests: "yaml" or "json"`)
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the hub (default: $KUBECONFIG, then ~/.kube/config)")
	f.StringVar(&o.context, "context", "", "kubeconfig context to use")
	return cmd
}

// defaultInstallImage is the release image of this binary's version, or
// :latest for a development build.
func defaultInstallImage() string {
	v := resolveVersion(version, commit, nil).Version
	if !strings.HasPrefix(v, "v") {
		v = "latest"
	}
	return install.DefaultImageRepository + ":" + v
}

func (o *installOptions) run(cmd *cobra.Command) error {
	if o.output != "yaml" && o.output != "json" {
		return fmt.Errorf(`-o must be "yaml" or "json", not %q`, o.output)
	}
	objs, err := install.Build(o.Options)
	if err != nil {
		return err
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: o.kubeconfig, Precedence: clientcmd.NewDefaultClientConfigLoadingRules().Precedence},
		&clientcmd.ConfigOverrides{CurrentContext: o.context})
	cfg, err := loader.ClientConfig()
	if !o.dryRun && err != nil && clientcmd.IsEmptyConfig(err) && o.kubeconfig == "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "no kubeconfig found: printing the manifests (pass --kubeconfig to apply them)")
		o.dryRun = true
	}
	if o.dryRun {
		if o.output == "json" {
			return install.WriteJSON(cmd.OutOrStdout(), objs)
		}
		return install.WriteYAML(cmd.OutOrStdout(), objs)
	}
	if err != nil {
		return fmt.Errorf("failed to load the kubeconfig: %w", err)
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
	fmt.Fprintf(cmd.ErrOrStderr(), "next: create Secret %s/propagit-git (key token, a Git token that may push the work branch)"+
		" and the member credential Secrets in karmada-cluster\n", o.Namespace)
	return nil
}
