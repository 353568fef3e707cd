package join

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// The controller signs the commits it writes to the works repositories
// (--works-signing-key); a pull agent with the Git store applies only Works
// whose commit verifies against the controller's public key, which join
// hands it in ConfigMap WorksKeysConfigMap (public keys are not secret),
// mounted at WorksKeysDir. To rotate the controller's key, join again
// with a file holding the old and the new public key, switch the
// controller to the new key, then join with the new one alone: the agent
// reads the folder again on every new commit.
const (
	WorksKeysConfigMap = "propagit-works-keys"
	WorksKeysDir       = "/etc/propagit/works-keys"
	worksKeysFile      = "trusted-keys"
)

// worksKeysManifest is the ConfigMap holding the controller's public keys.
func worksKeysManifest(keys string) ([]byte, error) {
	doc := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{"name": WorksKeysConfigMap, "namespace": Namespace,
			"labels": map[string]string{"app.kubernetes.io/name": "propagit", "app.kubernetes.io/component": "agent"}},
		"data": map[string]string{worksKeysFile: keys},
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("failed to render ConfigMap %s/%s: %w", Namespace, WorksKeysConfigMap, err)
	}
	return b, nil
}
