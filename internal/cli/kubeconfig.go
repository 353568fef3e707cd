package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeconfigOptions are a kubeconfig flag and its context flag, read with
// client-go's loading rules so that kubectl habits hold: the flag, else
// $KUBECONFIG (a list of files, merged as kubectl merges them), and the
// context named by the context flag, else the current one.
type kubeconfigOptions struct {
	path    string
	context string
	// prefix is the flags' ("" or "hub-"), for errors to name them.
	prefix string
}

// bindFlags binds <prefix>kubeconfig and <prefix>context; what names the
// cluster and fallback says what is used when neither flag nor
// $KUBECONFIG is set.
func (k *kubeconfigOptions) bindFlags(f *pflag.FlagSet, prefix, what, fallback string) {
	k.prefix = prefix
	if fallback == "" {
		fallback = "none"
	}
	f.StringVar(&k.path, prefix+"kubeconfig", "", fmt.Sprintf("kubeconfig of %s (default: $KUBECONFIG, else %s)", what, fallback))
	f.StringVar(&k.context, prefix+"context", "", fmt.Sprintf("kubeconfig context of %s (default: the current context)", what))
}

// restConfig follows controller-runtime's order: the kubeconfig flag,
// $KUBECONFIG, the in-cluster config, then ~/.kube/config when home is set
// (a hub is optional, so the user's everyday context is never taken for it
// by accident). Naming a context reads kubeconfig files only. It returns
// nil, nil when none of them exists.
func (k *kubeconfigOptions) restConfig(home bool) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.path
	if k.path == "" && k.context == "" && os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		cfg, err := rest.InClusterConfig()
		switch {
		case err == nil:
			return cfg, nil
		case !errors.Is(err, rest.ErrNotInCluster):
			return nil, fmt.Errorf("failed to read the in-cluster config: %w", err)
		case !home:
			return nil, nil
		}
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: k.context})
	cfg, err := loader.ClientConfig()
	switch {
	case clientcmd.IsEmptyConfig(err) && k.path == "" && k.context == "":
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("failed to load the kubeconfig%s: %w", k.describe(), err)
	}
	return cfg, nil
}

// describe names the file and context asked for, with their flags, for
// errors.
func (k *kubeconfigOptions) describe() string {
	s := ""
	if k.path != "" {
		s += fmt.Sprintf(" --%skubeconfig %s", k.prefix, k.path)
	}
	if k.context != "" {
		s += fmt.Sprintf(" --%scontext %q", k.prefix, k.context)
	}
	return s
}

// requireConfig is restConfig(true) for a cluster the command cannot do
// without; its error names the flags that give it.
func requireConfig(k kubeconfigOptions) (*rest.Config, error) {
	cfg, err := k.restConfig(true)
	if err == nil && cfg == nil {
		err = fmt.Errorf("no kubeconfig found and not running in a cluster: pass --%[1]skubeconfig (and --%[1]scontext) or set $%[2]s",
			k.prefix, clientcmd.RecommendedConfigPathEnvVar)
	}
	return cfg, err
}
