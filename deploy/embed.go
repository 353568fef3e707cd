// Package deploy embeds the kustomize base in this folder so that
// `propagit install` builds the very manifests `kubectl apply -k deploy/`
// would apply.
package deploy

import "embed"

// FS holds the kustomize tree: kustomization.yaml, crds/, controller/,
// rbac/, and the optional monitoring/ component.
//
//go:embed kustomization.yaml crds controller rbac monitoring
var FS embed.FS
