package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/diff"
	"github.com/propagit/propagit/internal/override"
	"github.com/propagit/propagit/internal/render"
	"github.com/propagit/propagit/internal/rollout"
)

// explainFormats are the values of explain's -o.
var explainFormats = []string{"text", "json", "yaml"}

type explainOptions struct {
	sourceOptions
	namespace string
	output    string
	previous  string
}

func newExplainCommand() *cobra.Command {
	o := &explainOptions{}
	cmd := &cobra.Command{
		Use:   "explain KIND/NAME [SOURCE] [-n NAMESPACE]",
		Short: "Explain where one template goes and why",
		Long: `explain shows, for one template: every policy that matched and why one
won; each cluster and whether it was kept or filtered (by which rule); the
replica arithmetic; and each override that changed it, per cluster.

KIND is a kind in any case (Deployment, deployment), its plural
(deployments), kubectl's short name (deploy, svc, cm, sts, ...), each
optionally followed by the group (deployment.apps, deploy.apps); a kind
that more than one group defines must be qualified. SOURCE (or --source)
is the fleet folder, the current folder by default.`,
		Example: `  propagit explain deployment/nginx ./fleet -n default
  propagit explain deploy/nginx --source ./fleet
  propagit explain clusterrole/reader ./fleet -o json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sourceArg(cmd, args, 1, &o.source); err != nil {
				return err
			}
			return o.run(cmd.OutOrStdout(), args[0])
		},
	}
	o.bindFlags(cmd)
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "default", "namespace of the object (ignored for cluster-scoped kinds)")
	bindFormat(cmd, &o.output, "text", explainFormats, "output format")
	cmd.Flags().StringVar(&o.previous, "previous", "", "folder of an earlier render whose placement is the history (claims, replicas, affinity term, evictions)")
	return cmd
}

func (o *explainOptions) run(w io.Writer, ref string) error {
	set, err := o.load()
	if err != nil {
		return err
	}
	in, err := o.input(set, o.previous)
	if err != nil {
		return err
	}
	res := render.Render(in)
	bindings := res.Bindings
	if res.Charts != nil {
		bindings = append(slices.Clone(bindings), res.Charts.Charts...) // the HelmCharts themselves
	}
	b, err := findBinding(bindings, ref, o.namespace)
	if err != nil {
		return err
	}
	b = redactSecretChanges(b)
	e := render.Explain(b, res.Clusters)
	e.Rollout = rollout.Explain(set, b, res.Clusters)
	switch o.output {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(e)
	case "yaml":
		out, err := yaml.Marshal(e)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	render.WriteExplanation(w, e)
	return nil
}

// shortNames are kubectl's short names of the built-in kinds, so that
// `explain deploy/web` works without a cluster to ask for its discovery.
var shortNames = map[string]schema.GroupKind{
	"cm": {Kind: "ConfigMap"}, "ep": {Kind: "Endpoints"}, "ev": {Kind: "Event"}, "limits": {Kind: "LimitRange"},
	"ns": {Kind: "Namespace"}, "no": {Kind: "Node"}, "pvc": {Kind: "PersistentVolumeClaim"}, "pv": {Kind: "PersistentVolume"},
	"po": {Kind: "Pod"}, "rc": {Kind: "ReplicationController"}, "quota": {Kind: "ResourceQuota"}, "sa": {Kind: "ServiceAccount"},
	"svc":    {Kind: "Service"},
	"deploy": {Group: "apps", Kind: "Deployment"}, "ds": {Group: "apps", Kind: "DaemonSet"},
	"rs": {Group: "apps", Kind: "ReplicaSet"}, "sts": {Group: "apps", Kind: "StatefulSet"},
	"hpa": {Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}, "cj": {Group: "batch", Kind: "CronJob"},
	"csr": {Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"},
	"ing": {Group: "networking.k8s.io", Kind: "Ingress"}, "netpol": {Group: "networking.k8s.io", Kind: "NetworkPolicy"},
	"pdb": {Group: "policy", Kind: "PodDisruptionBudget"}, "pc": {Group: "scheduling.k8s.io", Kind: "PriorityClass"},
	"sc":   {Group: "storage.k8s.io", Kind: "StorageClass"},
	"crd":  {Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
	"crds": {Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
}

// plural is the resource name kubectl derives from a kind: "deployments",
// "networkpolicies", "ingresses".
func plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}

// resolveKind finds the kinds among gks that kindRef (KIND, KIND.GROUP,
// a plural or a short name, any case) names. A kind or plural match wins
// over a short name, as a kind named like a short name is the user's own.
func resolveKind(kindRef string, gks []schema.GroupKind) []schema.GroupKind {
	word, group, qualified := strings.Cut(kindRef, ".")
	if group == "core" {
		group = ""
	}
	var exact, short []schema.GroupKind
	for _, gk := range gks {
		if qualified && gk.Group != group {
			continue
		}
		switch sn, ok := shortNames[strings.ToLower(word)]; {
		case strings.EqualFold(word, gk.Kind) || strings.EqualFold(word, plural(gk.Kind)) || strings.EqualFold(word, gk.Kind+"s"):
			exact = append(exact, gk)
		case ok && sn == gk:
			short = append(short, gk)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return short
}

// kindName is how a kind is written on the command line: "deployment.apps",
// "service" for the core group.
func kindName(gk schema.GroupKind) string {
	if gk.Group == "" {
		return strings.ToLower(gk.Kind)
	}
	return strings.ToLower(gk.Kind) + "." + gk.Group
}

// findBinding resolves KIND/NAME against the rendered templates.
func findBinding(bindings []*render.Binding, ref, namespace string) (*render.Binding, error) {
	kindRef, name, ok := strings.Cut(ref, "/")
	if !ok || kindRef == "" || name == "" {
		return nil, fmt.Errorf("want KIND/NAME, got %q", ref)
	}
	var gks []schema.GroupKind
	for _, b := range bindings {
		if gk := (schema.GroupKind{Group: b.Key.Group, Kind: b.Key.Kind}); !slices.Contains(gks, gk) {
			gks = append(gks, gk)
		}
	}
	kinds := resolveKind(kindRef, gks)
	switch len(kinds) {
	case 0:
		return nil, fmt.Errorf("no template of kind %q: no kind, plural or short name of the templates matches it", kindRef)
	case 1:
	default:
		names := make([]string, len(kinds))
		for i, gk := range kinds {
			names[i] = kindName(gk) + "/" + name
		}
		slices.Sort(names)
		return nil, fmt.Errorf("%s is ambiguous: %s; qualify the kind with its group", ref, strings.Join(names, ", "))
	}
	var elsewhere []string
	for _, b := range bindings {
		if b.Key.Group != kinds[0].Group || b.Key.Kind != kinds[0].Kind || b.Key.Name != name {
			continue
		}
		if b.Key.Namespace == "" || b.Key.Namespace == namespace {
			return b, nil
		}
		elsewhere = append(elsewhere, b.Key.Namespace)
	}
	want := workv1alpha1.ObjectKey{Group: kinds[0].Group, Kind: kinds[0].Kind, Namespace: namespace, Name: name}
	msg := "no template " + want.Display()
	if len(elsewhere) > 0 {
		slices.Sort(elsewhere)
		msg += fmt.Sprintf(" (there is one in %s: pass -n)", strings.Join(elsewhere, ", "))
	}
	return nil, errors.New(msg)
}

// redactSecretChanges returns b, or for a Secret a copy whose override
// changes show markers instead of the values they write.
func redactSecretChanges(b *render.Binding) *render.Binding {
	if b.Key.Group != "" || b.Key.Kind != "Secret" {
		return b
	}
	cp := *b
	cp.Targets = make([]*render.Target, len(b.Targets))
	for i, t := range b.Targets {
		tc := *t
		if t.Overrides != nil { // shared with other clusters: redact a copy
			res := *t.Overrides
			res.Changes = make([]override.Change, len(t.Overrides.Changes))
			for j, c := range t.Overrides.Changes {
				res.Changes[j] = diff.RedactChange(c)
			}
			tc.Overrides = &res
		}
		cp.Targets[i] = &tc
	}
	return &cp
}
