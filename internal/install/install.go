// Package install builds the hub manifests `propagit install` prints or
// applies: the deploy/ kustomize base, embedded in the binary and built with
// krusty, with the controller Deployment set from Options. It never holds a
// secret value: the Git token and the webhook secret are Secret names the
// Deployment refers to.
package install

import (
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/deploy"
)

const (
	// BaseNamespace is the namespace deploy/ is written for.
	BaseNamespace = "propagit-system"
	// DefaultImageRepository is where release images are published.
	DefaultImageRepository = "ghcr.io/propagit/propagit"
	// ControllerName names the controller Deployment and its container's
	// ServiceAccount, Role and Service.
	ControllerName = "propagit-controller"
	containerName  = "controller"
	webhookVolume  = "webhook"
	webhookDir     = "/etc/propagit/webhook"
)

// Webhook providers and, for each, the controller flag and the Secret key
// that holds its secret.
var webhookProviders = map[string]struct{ flag, key string }{
	"github":  {"--webhook-github-secret-file", "github-secret"},
	"gitlab":  {"--webhook-gitlab-token-file", "gitlab-token"},
	"generic": {"--webhook-token-file", "token"},
}

// Options are what a user sets with propagit install's flags.
type Options struct {
	// Repo is the fleet repository URL the controller follows.
	Repo string
	// Branch and Path select the branch and the folder inside the
	// repository (empty: the root).
	Branch, Path string
	// WorksStore is "git" or "cr".
	WorksStore string
	// WebhookSecret names a Secret in Namespace holding the webhook secret
	// under the key WebhookProvider uses (github-secret, gitlab-token or
	// token); empty leaves the webhook off.
	WebhookSecret, WebhookProvider string
	// Replicas of the controller; they elect a leader (--leader-elect), so
	// one acts and the others stand by, or with Shard split the members.
	Replicas int32
	// Shard runs the replicas with --shard instead of --leader-elect: each
	// applies to its share of the push members.
	Shard bool
	// Image of the controller.
	Image string
	// Namespace replaces propagit-system everywhere.
	Namespace string
	// ServiceMonitor adds deploy/monitoring (needs the Prometheus
	// Operator's CRD).
	ServiceMonitor bool
	// RequireGitSecret makes the pods wait for Secret propagit-git instead
	// of starting without a Git credential: set when install creates it,
	// and always for an SSH repository (its key is mounted from it).
	RequireGitSecret bool
}

// LabelInstall marks every object install creates with the namespace of
// the installation, so uninstall removes exactly those.
const LabelInstall = "propagit.io/install"

// DefaultOptions are deploy/'s own values.
func DefaultOptions() Options {
	return Options{Branch: "main", WorksStore: "git", WebhookProvider: "github", Replicas: 2,
		Image: DefaultImageRepository + ":latest", Namespace: BaseNamespace}
}

// Validate says which option is wrong and what is allowed.
func (o Options) Validate() error {
	switch {
	case o.Repo == "":
		return fmt.Errorf("a repository URL is required (--repo)")
	case o.WorksStore != "git" && o.WorksStore != "cr":
		return fmt.Errorf(`works store must be "git" or "cr", not %q`, o.WorksStore)
	case o.Replicas < 1:
		return fmt.Errorf("replicas must be at least 1, not %d", o.Replicas)
	case o.Image == "":
		return fmt.Errorf("an image is required (--image): this development build has no release image of its own")
	case strings.HasPrefix(o.Path, "/") || strings.Contains("/"+o.Path+"/", "/../"):
		return fmt.Errorf("path %q must be relative to the repository root, without ..", o.Path)
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return fmt.Errorf("namespace %q: %s", o.Namespace, strings.Join(errs, "; "))
	}
	if err := repoWithoutCredentials(o.Repo, o.Namespace); err != nil {
		return err
	}
	if o.WebhookSecret != "" {
		if errs := validation.IsDNS1123Subdomain(o.WebhookSecret); len(errs) > 0 {
			return fmt.Errorf("webhook secret name %q: %s", o.WebhookSecret, strings.Join(errs, "; "))
		}
		if _, ok := webhookProviders[o.WebhookProvider]; !ok {
			return fmt.Errorf(`webhook provider must be "github", "gitlab" or "generic", not %q`, o.WebhookProvider)
		}
	}
	return nil
}

// repoWithoutCredentials refuses a repository URL that carries a secret:
// it would be written into the Deployment's args, readable by whoever may
// read Deployments or list the node's processes. A user name alone is an
// SSH account (ssh://git@host/…), not a secret; over HTTP(S) the user name
// is where Git hosts take a token. The error never quotes the URL.
func repoWithoutCredentials(repo, namespace string) error {
	u, err := url.Parse(repo)
	if err != nil || u.User == nil {
		return nil // scp-like git@host:path, or not a URL at all: no userinfo to leak
	}
	if _, hasPassword := u.User.Password(); !hasPassword && u.Scheme == "ssh" {
		return nil
	}
	return fmt.Errorf("--repo %s://…@%s%s carries credentials, which would be copied into the Deployment: "+
		"remove them from the URL and put the token in Secret propagit-git instead "+
		"(kubectl -n %s create secret generic propagit-git --from-literal=token=…)", u.Scheme, u.Host, u.Path, namespace)
}

// Build returns the objects to apply, in kustomize's apply order
// (Namespaces and CRDs first), each labelled LabelInstall=o.Namespace.
func Build(o Options) ([]*unstructured.Unstructured, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	objs, err := kustomize(o.ServiceMonitor, o.Namespace)
	if err != nil {
		return nil, err
	}
	found := false
	for _, u := range objs {
		if o.Namespace != BaseNamespace {
			renameNamespace(u, o.Namespace)
		}
		if u.GetKind() == "Deployment" && u.GetName() == ControllerName {
			if err := setController(u, o); err != nil {
				return nil, fmt.Errorf("Deployment/%s/%s: %w", u.GetNamespace(), u.GetName(), err)
			}
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("deploy/ holds no Deployment %s", ControllerName)
	}
	return objs, nil
}

// kustomize builds the embedded deploy/ on an in-memory copy, plugins off,
// adding the monitoring component when asked and labelling every object
// with LabelInstall=namespace (namespace is a validated DNS label).
func kustomize(serviceMonitor bool, namespace string) ([]*unstructured.Unstructured, error) {
	mem := filesys.MakeFsInMemory()
	err := fs.WalkDir(deploy.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := deploy.FS.ReadFile(p)
		if err != nil {
			return err
		}
		return mem.WriteFile(path.Join("/deploy", p), data)
	})
	if err != nil {
		return nil, fmt.Errorf("failed to copy the embedded deploy/: %w", err)
	}
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- deploy\n" +
		"labels:\n- includeSelectors: false\n  pairs:\n    " + LabelInstall + ": " + namespace + "\n"
	if serviceMonitor {
		k += "components:\n- deploy/monitoring\n"
	}
	if err := mem.WriteFile("/kustomization.yaml", []byte(k)); err != nil {
		return nil, err
	}
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, "/")
	if err != nil {
		return nil, fmt.Errorf("failed to build deploy/ with kustomize: %w", err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range resMap.Resources() {
		// Through JSON, so numbers are int64 as in every other Unstructured.
		js, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("failed to read %s from deploy/: %w", r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("failed to read %s from deploy/: %w", r.CurId(), err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// WithSecret returns objs with secret placed right after the Namespace it
// lives in, so it exists before any pod that mounts it is created.
func WithSecret(objs []*unstructured.Unstructured, secret *unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs)+1)
	placed := false
	for _, u := range objs {
		out = append(out, u)
		if !placed && u.GetKind() == "Namespace" && u.GetName() == secret.GetNamespace() {
			out, placed = append(out, secret), true
		}
	}
	if !placed {
		out = append([]*unstructured.Unstructured{secret}, out...)
	}
	return out
}
