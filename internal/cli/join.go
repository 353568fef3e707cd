package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/propagit/propagit/internal/join"
	"github.com/propagit/propagit/internal/restrict"
	"github.com/propagit/propagit/internal/secrets/keys"
)

type joinOptions struct {
	join.Options
	kubeconfig kubeconfigOptions
	hub        kubeconfigOptions
	mode       string
	out        string
	// restrictions is the restriction policy file, "" for the default.
	restrictions string
	dryRun       bool
	// worksPublicKey is the file of the controller's public key(s).
	worksPublicKey string
}

func newJoinCommand() *cobra.Command {
	o := &joinOptions{Options: join.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "join NAME --kubeconfig member.kubeconfig --mode push|pull",
		Short: "Create propagit's ServiceAccount and RBAC in a member and print its Cluster manifest",
		Long: `join creates, in the member, namespace propagit-system, ServiceAccount
propagit and the RBAC propagit needs (cluster-wide, or limited to --namespaces),
checks them with a server-side dry-run of a Deployment, and prints the Cluster
to commit plus, for push, the hub credential Secret (never commit it) or, for
pull, the agent Deployment. With --mode pull --hub-kubeconfig (Works as custom
resources) it also creates on the hub namespace propagit-member-NAME with
ServiceAccount, Role and RoleBinding propagit-agent there (read the Work,
write its status and heartbeat; nothing of other members) and writes the
agent's hub kubeconfig as Secret propagit-hub for the member (never commit
it). The push Secret (server, token, caBundle) goes in the
hub namespace karmada-cluster and is labelled propagit.io/credentials-for=NAME:
only the Cluster of that name can use it, at that server. Every object is labelled propagit.io/joined-by=join.
Running join again changes nothing but mints a fresh token.`,
		Example: `  propagit join edge-1 --kubeconfig edge-1.kubeconfig --mode push --region eu --labels env=prod --out clusters/
  propagit join shop --kubeconfig shop.kubeconfig --mode pull --namespaces shop,shop-data
  propagit join edge-7 --kubeconfig edge-7.kubeconfig --mode pull --hub-kubeconfig hub.kubeconfig --out join-edge-7/
  propagit join edge-8 --kubeconfig edge-8.kubeconfig --mode pull --works-repo 'https://git.example.com/fleet-works-{cluster}.git'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			o.Mode = join.Mode(strings.ToLower(o.mode))
			return o.run(cmd)
		},
	}
	fs := cmd.Flags()
	o.kubeconfig.bindFlags(fs, "", "the member, with rights to create RBAC", "~/.kube/config")
	fs.StringVar(&o.mode, "mode", string(join.ModePush), "push (the hub applies) or pull (an agent in the member applies)")
	fs.StringVar(&o.Region, "region", "", "spec.region of the Cluster")
	fs.StringVar(&o.Provider, "provider", "", "spec.provider of the Cluster")
	fs.StringSliceVar(&o.Zones, "zones", nil, "spec.zones of the Cluster")
	fs.StringToStringVar(&o.Labels, "labels", nil, "labels of the Cluster, k=v,...")
	fs.StringSliceVar(&o.Namespaces, "namespaces", nil, "limit propagit to these namespaces (created if missing)")
	o.hub.bindFlags(fs, "hub-", "the hub", "none")
	fs.Lookup("hub-kubeconfig").Usage = "pull with Works as custom resources: kubeconfig of the hub, with rights to create namespaces and RBAC; the agent gets an identity there limited to its own Work"
	fs.StringVar(&o.WorksRepo, "works-repo", "", "pull with the Git store: the agent's works repository (a URL, or a template with {cluster})")
	fs.StringVar(&o.out, "out", "", "directory to write the manifests to (default: stdout)")
	fs.StringVar(&o.worksPublicKey, "works-public-key", "", "pull with the Git store: the controller's public key(s) for its --works-signing-key (an allowed_signers line or an armored OpenPGP key; old and new together while rotating): the agent applies only Works the controller signed")
	fs.DurationVar(&o.TokenExpiration, "token-expiration", o.TokenExpiration, "requested lifetime of the push token; the controller renews it after two thirds")
	fs.BoolVar(&o.AgeKey, "age-key", false, "create (or keep) the member's age key for SOPS-encrypted Secrets, Secret propagit-system/"+join.AgeKeySecret+
		", annotate the Cluster with its recipient (propagit.io/age-recipient) and print it; a pull agent is given --decryption-secret")
	fs.DurationVar(&o.HubTokenExpiration, "hub-token-expiration", o.HubTokenExpiration, "lifetime of the pull agent's hub token (--hub-kubeconfig), limited to the agent's own Work; the agent renews it after two thirds of its life")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print everything join would create in the member (RBAC included) and on the hub, and the manifests, without contacting either; the kubeconfig files are only read")
	fs.StringVar(&o.restrictions, "restrictions", "", "the controller's restriction policy file: the member grants only its namespaces (exact names), "+
		"and bind/escalate on roles only when it allows admin-bindings (without it, the default policy: no bind/escalate)")
	return cmd
}

func (o *joinOptions) run(cmd *cobra.Command) error {
	o.Hub = o.hub.path != "" || o.hub.context != ""
	if err := o.Validate(); err != nil {
		return err
	}
	if err := o.readWorksPublicKey(); err != nil {
		return err
	}
	if o.Hub && o.Mode != join.ModePull {
		return fmt.Errorf("--hub-kubeconfig and --hub-context are for --mode pull: a push member has no agent")
	}
	var policy *restrict.Policy
	if o.restrictions != "" {
		var err error
		if policy, err = restrict.Load(o.restrictions); err != nil {
			return err
		}
	}
	if err := o.WithRestrictions(policy); err != nil {
		return err
	}
	cfg, err := requireConfig(o.kubeconfig)
	if err != nil {
		return err
	}
	if o.dryRun {
		return o.printPlan(cmd, cfg)
	}
	res, err := join.Join(cmd.Context(), cfg, o.Options)
	if err != nil {
		return err
	}
	m, err := join.Render(o.Options, res)
	if err != nil {
		return err
	}
	if o.Hub {
		if m.HubSecret, err = o.joinHub(cmd); err != nil {
			return err
		}
	}
	if len(m.Secret) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s holds a credential for %s (expires %s): apply it to the hub, never commit it\n",
			secretDisplay(join.CredentialsNamespace, join.SecretName(o.Name)), o.Name, res.TokenExpiry.UTC().Format(time.RFC3339))
	}
	if res.AgeRecipient != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "age recipient of %s: %s (encrypt its Secrets with sops encrypt --age %s)\n", o.Name, res.AgeRecipient, res.AgeRecipient)
		if o.Mode == join.ModePush {
			fmt.Fprintf(cmd.ErrOrStderr(), "push mode: copy %s from the member to the hub as %s; the controller decrypts with it\n",
				secretDisplay(join.Namespace, join.AgeKeySecret), secretDisplay(join.CredentialsNamespace, keys.MemberSecretPrefix+o.Name))
		}
	}
	return writeManifests(cmd.OutOrStdout(), o.out, o.Name, m)
}

// printPlan writes what join would create and print, contacting nothing.
// The hub kubeconfig is not even read: the hub objects depend only on the
// cluster's name.
func (o *joinOptions) printPlan(cmd *cobra.Command, cfg *rest.Config) error {
	plan, err := join.DryRun(cfg, o.Options)
	if err != nil {
		return err
	}
	m := plan.Manifests
	m.Plan = plan.Member
	m.HubPlan = plan.Hub
	if o.Mode == join.ModePush {
		fmt.Fprintf(cmd.ErrOrStderr(), "dry run: nothing was contacted; a real join also mints the push token and prints %s for the hub\n",
			secretDisplay(join.CredentialsNamespace, join.SecretName(o.Name)))
	} else {
		fmt.Fprintln(cmd.ErrOrStderr(), "dry run: nothing was contacted")
	}
	return writeManifests(cmd.OutOrStdout(), o.out, o.Name, m)
}

// joinHub makes the agent's identity on the hub and returns the member
// Secret holding its kubeconfig.
func (o *joinOptions) joinHub(cmd *cobra.Command) ([]byte, error) {
	hubCfg, err := requireConfig(o.hub)
	if err != nil {
		return nil, err
	}
	id, err := join.JoinHub(cmd.Context(), hubCfg, o.Options)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s holds the hub credential of %s's agent (namespace %s, expires %s): apply it to the member, never commit it\n",
		secretDisplay(join.Namespace, join.HubSecretName), o.Name, id.Namespace, id.TokenExpiry.UTC().Format(time.RFC3339))
	return join.RenderHubSecret(id)
}

// writeManifests prints a YAML stream, or writes one file per document to dir.
func writeManifests(stdout io.Writer, dir, name string, m join.Manifests) error {
	docs := []struct {
		file string
		body []byte
		mode os.FileMode
	}{
		{name + "-member-objects.yaml", m.Plan, 0o644},
		{name + "-hub-objects.yaml", m.HubPlan, 0o644},
		{name + "-cluster.yaml", m.Cluster, 0o644},
		{name + "-credentials.secret.yaml", m.Secret, 0o600},
		{name + "-agent.yaml", m.Agent, 0o644},
		{name + "-hub.secret.yaml", m.HubSecret, 0o600},
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("failed to create %s: %w", dir, err)
		}
	}
	first := true
	for _, d := range docs {
		if len(d.body) == 0 {
			continue
		}
		if dir != "" {
			if err := os.WriteFile(filepath.Join(dir, d.file), d.body, d.mode); err != nil {
				return fmt.Errorf("failed to write %s: %w", d.file, err)
			}
			continue
		}
		if !first {
			fmt.Fprintln(stdout, "---")
		}
		first = false
		if _, err := stdout.Write(d.body); err != nil {
			return err
		}
	}
	return nil
}

func newUnjoinCommand() *cobra.Command {
	var kubeconfig, hub kubeconfigOptions
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "unjoin NAME --kubeconfig member.kubeconfig [--hub-kubeconfig hub.kubeconfig]",
		Short: "Delete what propagit join created in a member (and on the hub for a pull agent)",
		Long: `unjoin deletes the objects labelled propagit.io/joined-by=join in the member
and nothing else. A namespace join created is kept while it still holds other
objects. With --hub-kubeconfig it also deletes the pull agent's identity on the
hub (ServiceAccount, Role and RoleBinding propagit-agent in propagit-member-NAME),
which revokes its hub token; that namespace is kept while it holds the Work.
Remove the Cluster from Git and the credential Secret from the hub yourself.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if errs := validation.IsDNS1123Label(args[0]); len(errs) > 0 {
				return &ExitError{Code: 2, Err: fmt.Errorf("invalid cluster name %q: %s", args[0], errs[0])}
			}
			cfg, err := requireConfig(kubeconfig)
			if err != nil {
				return err
			}
			unjoinMember, unjoinHub := join.Unjoin, join.UnjoinHub
			if dryRun {
				unjoinMember, unjoinHub = join.PlanUnjoin, join.PlanUnjoinHub
			}
			res, err := unjoinMember(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			printUnjoin(cmd.OutOrStdout(), "", res, dryRun)
			if hub.path == "" && hub.context == "" {
				return nil
			}
			hubCfg, err := requireConfig(hub)
			if err != nil {
				return err
			}
			if res, err = unjoinHub(cmd.Context(), hubCfg, args[0]); err != nil {
				return err
			}
			printUnjoin(cmd.OutOrStdout(), "hub: ", res, dryRun)
			return nil
		},
	}
	kubeconfig.bindFlags(cmd.Flags(), "", "the member", "~/.kube/config")
	hub.bindFlags(cmd.Flags(), "hub-", "the hub", "")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "read the member (and hub) and print what unjoin would delete and keep, deleting nothing")
	cmd.Flags().Lookup("hub-kubeconfig").Usage = "kubeconfig of the hub: also revoke the pull agent's identity there (the hub is not contacted without this flag or --hub-context)"
	return cmd
}

func printUnjoin(w io.Writer, prefix string, res *join.UnjoinResult, dryRun bool) {
	verb := "deleted"
	if dryRun {
		verb = "would delete"
	}
	for _, d := range res.Deleted {
		fmt.Fprintf(w, "%s%s %s\n", prefix, verb, d)
	}
	kept := "kept"
	if dryRun {
		kept = "would keep"
	}
	for _, k := range res.Kept {
		fmt.Fprintf(w, "%s%s %s\n", prefix, kept, k)
	}
}
