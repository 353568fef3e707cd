package install

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// renameNamespace moves u, and the ServiceAccount subjects of a binding,
// from BaseNamespace to ns. Objects in other namespaces (the member
// credentials Role in karmada-cluster) stay where they are.
func renameNamespace(u *unstructured.Unstructured, ns string) {
	if u.GetNamespace() == BaseNamespace {
		u.SetNamespace(ns)
	}
	if u.GetKind() == "Namespace" && u.GetName() == BaseNamespace {
		u.SetName(ns)
	}
	subjects, ok, _ := unstructured.NestedSlice(u.Object, "subjects")
	if !ok {
		return
	}
	for _, s := range subjects {
		if m, ok := s.(map[string]any); ok && m["namespace"] == BaseNamespace {
			m["namespace"] = ns
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, subjects, "subjects")
}

// setController writes the options into the controller Deployment: its
// replicas, image and args, and the webhook Secret volume.
func setController(u *unstructured.Unstructured, o Options) error {
	if err := unstructured.SetNestedField(u.Object, int64(o.Replicas), "spec", "replicas"); err != nil {
		return err
	}
	containers, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if err != nil {
		return err
	}
	var c map[string]any
	for _, item := range containers {
		if m, ok := item.(map[string]any); ok && m["name"] == containerName {
			c = m
		}
	}
	if c == nil {
		return fmt.Errorf("no container %q", containerName)
	}
	args, _, err := unstructured.NestedStringSlice(c, "args")
	if err != nil {
		return err
	}
	args = setArg(args, "--repo", o.Repo)
	args = setArg(args, "--branch", o.Branch)
	args = setArg(args, "--path", o.Path)
	args = setArg(args, "--works-store", o.WorksStore)
	args = setArg(args, "--controller-namespace", o.Namespace)
	if o.Shard {
		args = setArg(args, "--leader-elect", "")
		args = setArg(args, "--shard", "true")
	}
	if o.WebhookSecret != "" {
		p := webhookProviders[o.WebhookProvider]
		args = setArg(args, p.flag, webhookDir+"/"+p.key)
	}
	ssh := IsSSH(o.Repo)
	if ssh {
		args = setArg(args, "--git-ssh-key", gitDir+"/"+keyIdentity)
		args = setArg(args, "--known-hosts", gitDir+"/"+keyKnownHosts)
		mounts, _, _ := unstructured.NestedSlice(c, "volumeMounts")
		c["volumeMounts"] = append(mounts, map[string]any{"name": gitVolume, "mountPath": gitDir, "readOnly": true})
	} else if o.RequireGitSecret {
		if err := requireTokenSecret(c); err != nil {
			return err
		}
	}
	c["image"] = o.Image
	c["args"] = toAny(args)
	if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		return err
	}
	if ssh {
		if err := addGitVolume(u); err != nil {
			return err
		}
	}
	if o.WebhookSecret != "" {
		return setWebhookVolume(u, o.WebhookSecret)
	}
	return nil
}

// requireTokenSecret makes the token variable of container c required: the
// pod waits for Secret propagit-git instead of starting without it.
func requireTokenSecret(c map[string]any) error {
	env, _, _ := unstructured.NestedSlice(c, "env")
	for _, item := range env {
		m, ok := item.(map[string]any)
		if !ok || m["name"] != "PROPAGIT_GIT_TOKEN" {
			continue
		}
		if err := unstructured.SetNestedField(m, false, "valueFrom", "secretKeyRef", "optional"); err != nil {
			return err
		}
		c["env"] = env
		return nil
	}
	return fmt.Errorf("no PROPAGIT_GIT_TOKEN variable in container %q", containerName)
}

// addGitVolume mounts Secret propagit-git, required: over SSH the
// controller cannot fetch without its key, so the pod waits for it.
func addGitVolume(u *unstructured.Unstructured) error {
	volumes, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "volumes")
	if err != nil {
		return err
	}
	volumes = append(volumes, map[string]any{"name": gitVolume,
		"secret": map[string]any{"secretName": GitSecretName, "optional": false, "defaultMode": int64(0o440)}})
	return unstructured.SetNestedSlice(u.Object, volumes, "spec", "template", "spec", "volumes")
}

// setArg replaces the value of flag in args (--flag=value or a bare
// --flag), appends it when missing, and removes it when value is empty.
func setArg(args []string, flag, value string) []string {
	out := make([]string, 0, len(args)+1)
	set := false
	for _, a := range args {
		if a != flag && !strings.HasPrefix(a, flag+"=") {
			out = append(out, a)
			continue
		}
		if !set && value != "" {
			out = append(out, flag+"="+value)
			set = true
		}
	}
	if !set && value != "" {
		out = append(out, flag+"="+value)
	}
	return out
}

// setWebhookVolume points the webhook volume at the named Secret and makes
// it required: a controller told to verify webhooks must not start without
// the secret.
func setWebhookVolume(u *unstructured.Unstructured, secret string) error {
	volumes, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "volumes")
	if err != nil {
		return err
	}
	for _, item := range volumes {
		if m, ok := item.(map[string]any); ok && m["name"] == webhookVolume {
			m["secret"] = map[string]any{"secretName": secret, "optional": false}
			return unstructured.SetNestedSlice(u.Object, volumes, "spec", "template", "spec", "volumes")
		}
	}
	return fmt.Errorf("no volume %q", webhookVolume)
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
