package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/install"
)

type uninstallOptions struct {
	install.UninstallOptions
	kube kubeconfigOptions
}

func newUninstallCommand() *cobra.Command {
	o := &uninstallOptions{UninstallOptions: install.UninstallOptions{Namespace: install.BaseNamespace}}
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Delete what install created on the hub (the objects labelled propagit.io/install=NAMESPACE)",
		Long: `uninstall deletes, from the cluster of the current kubeconfig context, the
objects install applied for the installation in --controller-namespace: those of the
kinds install creates that carry the label propagit.io/install=NAMESPACE,
the controller first. Nothing else is touched: not the Works recorded in Git,
not what the members run, not a Secret you created.

Two kinds stay unless you say so, because they hold more than install put
there: the Namespaces (the member credentials in karmada-cluster live in one;
--delete-namespaces deletes them with everything in them) and the Work CRD
(deleting it deletes every Work custom resource on the cluster, of every
installation; --delete-crds). --dry-run lists what would be deleted.`,
		Example: `  propagit uninstall --dry-run
  propagit uninstall --controller-namespace fleet-ops --delete-namespaces`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	bindControllerNamespace(f, &o.Namespace, o.Namespace, "namespace of the controller, as given to install")
	f.BoolVar(&o.DeleteNamespaces, "delete-namespaces", false, "also delete the Namespaces install created, with everything in them")
	f.BoolVar(&o.DeleteCRDs, "delete-crds", false, "also delete the Work CRD, and with it every Work custom resource on the cluster")
	f.BoolVar(&o.DryRun, "dry-run", false, "list what would be deleted, delete nothing")
	o.kube.bindFlags(f, "", "the hub", "the in-cluster config, then ~/.kube/config")
	return cmd
}

func (o *uninstallOptions) run(cmd *cobra.Command) error {
	cfg, err := requireConfig(o.kube)
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("failed to connect to %s: %w", cfg.Host, err)
	}
	out, n := cmd.OutOrStdout(), 0
	err = install.Uninstall(cmd.Context(), c, o.UninstallOptions, func(s install.Step) {
		n++
		if s.Why != "" {
			fmt.Fprintf(out, "%s %s: %s\n", s.Ref, s.Action, s.Why)
			return
		}
		fmt.Fprintf(out, "%s %s\n", s.Ref, s.Action)
	})
	if err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "nothing labelled %s=%s on %s\n", install.LabelInstall, o.Namespace, cfg.Host)
	}
	return nil
}
