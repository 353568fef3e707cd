package join

import (
	"bytes"
	"fmt"
	"text/template"

	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/cluster"
)

// Manifests are the documents a join produces.
type Manifests struct {
	// Cluster is the Cluster to commit to Git.
	Cluster []byte
	// Secret is, for push, the credential Secret for the hub, bound to the
	// member by the propagit.io/credentials-for label. It holds a token:
	// never commit it.
	Secret []byte
	// Agent is, for pull, the agent Deployment to apply in the member.
	Agent []byte
	// HubSecret is, for pull with the CR store, the Secret holding the
	// agent's hub kubeconfig, to apply in the member. Never commit it.
	HubSecret []byte
	// Plan and HubPlan are, for a dry run only, the objects join would
	// write in the member and on the hub.
	Plan    []byte
	HubPlan []byte
}

// HubSecretName is the member Secret holding the agent's hub kubeconfig.
const HubSecretName = "propagit-hub"

// SecretName is the hub Secret name holding the member's credentials.
func SecretName(cluster string) string { return cluster + "-credentials" }

// Render builds the manifests for opts from the join result; it is pure.
func Render(opts Options, res *Result) (Manifests, error) {
	var m Manifests
	var err error
	if m.Cluster, err = clusterManifest(opts, res); err != nil {
		return m, err
	}
	switch opts.Mode {
	case ModePush:
		m.Secret, err = secretManifest(opts.Name, res)
	case ModePull:
		m.Agent, err = agentManifest(opts)
	}
	return m, err
}

// RenderHubSecret is the member Secret holding id's kubeconfig, which the
// agent Deployment of a CR-store join mounts.
func RenderHubSecret(id *HubIdentity) ([]byte, error) {
	doc := map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata": map[string]any{"name": HubSecretName, "namespace": Namespace,
			"labels": map[string]string{workv1alpha1.LabelJoinedBy: LabelJoinedByValue}},
		"type": "Opaque",
		"data": map[string][]byte{"kubeconfig": id.Kubeconfig},
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("failed to render Secret %s/%s: %w", Namespace, HubSecretName, err)
	}
	return b, nil
}

func clusterManifest(opts Options, res *Result) ([]byte, error) {
	spec := map[string]any{"apiEndpoint": res.APIEndpoint}
	if opts.Mode == ModePull {
		spec["syncMode"] = clusterv1alpha1.SyncModePull
	} else {
		spec["syncMode"] = clusterv1alpha1.SyncModePush
		spec["secretRef"] = clusterv1alpha1.LocalSecretReference{Namespace: CredentialsNamespace, Name: SecretName(opts.Name)}
	}
	if opts.Region != "" {
		spec["region"] = opts.Region
	}
	if opts.Provider != "" {
		spec["provider"] = opts.Provider
	}
	if len(opts.Zones) > 0 {
		spec["zones"] = opts.Zones
	}
	meta := map[string]any{"name": opts.Name}
	if len(opts.Labels) > 0 {
		meta["labels"] = opts.Labels
	}
	if res.AgeRecipient != "" {
		meta["annotations"] = map[string]string{workv1alpha1.AnnotationAgeRecipient: res.AgeRecipient}
	}
	doc := map[string]any{
		"apiVersion": clusterv1alpha1.GroupVersion,
		"kind":       clusterv1alpha1.KindCluster,
		"metadata":   meta,
		"spec":       spec,
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("failed to render Cluster %s: %w", opts.Name, err)
	}
	return b, nil
}

// secretManifest is the member's bound credential: Karmada's token and
// caBundle keys plus the server, labelled with the cluster's name so that
// only the Cluster of that name can use it (cluster.Credentials).
func secretManifest(name string, res *Result) ([]byte, error) {
	data := map[string][]byte{cluster.KeyServer: []byte(res.APIEndpoint), cluster.KeyToken: []byte(res.Token)}
	if len(res.CABundle) > 0 {
		data[cluster.KeyCABundle] = res.CABundle
	}
	doc := map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata": map[string]any{"name": SecretName(name), "namespace": CredentialsNamespace,
			"labels": map[string]string{workv1alpha1.LabelCredentialsFor: name}},
		"type": "Opaque",
		"data": data, // []byte marshals as base64
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("failed to render Secret %s/%s: %w", CredentialsNamespace, SecretName(name), err)
	}
	return b, nil
}

// agentTemplate is the pull agent, running as the joined ServiceAccount.
// With the CR store it reads its Work with the hub identity JoinHub made;
// with the Git store the repository and its token are left for the operator.
var agentTemplate = template.Must(template.New("agent").Parse(`# propagit agent for cluster {{.Cluster}}: apply in the member after ` + "`propagit join`" + `.
{{- if .Hub}}
# It reads its Work on the hub with the kubeconfig in Secret {{.HubSecret}} (apply
# {{.Cluster}}-hub.secret.yaml first): its own namespace {{.HubNamespace}} only.
{{- else if .WorksRepo}}
# Create Secret propagit-agent-git (key token) with access to this member's works
# repository only (read, and push to refs/propagit/*); never to the source repository.
{{- else}}
# Set --repo, and create Secret propagit-agent-git (key token) with read access to
# the work branch and write access to refs/propagit/status/{{.Cluster}}. A shared works
# repository is not isolated: prefer --works-repo with {cluster} (see README).
{{- end}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: propagit-agent
  namespace: {{.Namespace}}
  labels: {app.kubernetes.io/name: propagit, app.kubernetes.io/component: agent}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector:
    matchLabels: {app.kubernetes.io/name: propagit, app.kubernetes.io/component: agent}
  template:
    metadata:
      labels: {app.kubernetes.io/name: propagit, app.kubernetes.io/component: agent}
    spec:
      serviceAccountName: {{.ServiceAccount}}
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: agent
        image: ghcr.io/propagit/propagit:latest
        args:
        - agent
        - --cluster={{.Cluster}}
{{- if .Hub}}
        - --works-store=cr
        - --hub-kubeconfig=/etc/propagit/hub/kubeconfig
        - --hub-secret={{.Namespace}}/{{.HubSecret}}
{{- else if .WorksRepo}}
        - --works-store=git
        - --works-repo={{.WorksRepo}}
{{- else}}
        - --repo=https://git.example.com/fleet.git
        - --works-store=git
{{- end}}
        - --cache-dir=/cache
{{- if .AgeKey}}
        - --decryption-secret={{.AgeKeySecret}}
{{- end}}
{{- if .WorksKeys}}
        - --works-trusted-keys={{.WorksKeysDir}}
{{- end}}
{{- if not .Hub}}
        env:
        - name: PROPAGIT_GIT_TOKEN
          valueFrom:
            secretKeyRef: {name: propagit-agent-git, key: token, optional: true}
{{- end}}
        resources:
          requests: {cpu: 50m, memory: 128Mi}
          limits: {memory: 512Mi}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}
        volumeMounts:
        - {name: cache, mountPath: /cache}
{{- if .Hub}}
        - {name: hub, mountPath: /etc/propagit/hub, readOnly: true}
{{- end}}
{{- if .WorksKeys}}
        - {name: works-keys, mountPath: {{.WorksKeysDir}}, readOnly: true}
{{- end}}
      volumes:
      - {name: cache, emptyDir: {}}
{{- if .Hub}}
      - {name: hub, secret: {secretName: {{.HubSecret}}}}
{{- end}}
{{- if .WorksKeys}}
      - {name: works-keys, configMap: {name: {{.WorksKeysConfigMap}}}}
{{- end}}
`))

func agentManifest(opts Options) ([]byte, error) {
	hubNS := ""
	if opts.Hub {
		var err error
		if hubNS, err = workv1alpha1.MemberNamespace(opts.Name); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	err := agentTemplate.Execute(&buf, map[string]any{
		"Cluster": opts.Name, "Namespace": Namespace, "ServiceAccount": ServiceAccount,
		"Hub": opts.Hub, "HubSecret": HubSecretName, "HubNamespace": hubNS, "WorksRepo": opts.WorksRepo,
		"AgeKey": opts.AgeKey, "AgeKeySecret": AgeKeySecret,
		"WorksKeys": opts.WorksPublicKey != "", "WorksKeysDir": WorksKeysDir, "WorksKeysConfigMap": WorksKeysConfigMap,
	})
	if err != nil {
		return nil, fmt.Errorf("failed to render the agent manifest: %w", err)
	}
	if opts.WorksPublicKey != "" {
		cm, err := worksKeysManifest(opts.WorksPublicKey)
		if err != nil {
			return nil, err
		}
		buf.WriteString("---\n")
		buf.Write(cm)
	}
	return buf.Bytes(), nil
}
