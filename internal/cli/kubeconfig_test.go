package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeKubeconfig writes a kubeconfig with one context per name, each
// pointing at its own server, and current-context set to current.
func writeKubeconfig(t *testing.T, current string, servers map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n")
	for name, server := range servers {
		b.WriteString("- {name: " + name + ", cluster: {server: \"" + server + "\"}}\n")
	}
	b.WriteString("users:\n")
	for name := range servers {
		b.WriteString("- {name: " + name + ", user: {token: t}}\n")
	}
	b.WriteString("contexts:\n")
	for name := range servers {
		b.WriteString("- {name: " + name + ", context: {cluster: " + name + ", user: " + name + "}}\n")
	}
	b.WriteString("current-context: " + current + "\n")
	p := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The kubectl habits: $KUBECONFIG is a list of files merged in order (the
// first current-context wins), --context picks any context of the merged
// config, --kubeconfig replaces $KUBECONFIG.
func TestKubeconfigLoadingRules(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // never in a cluster here
	first := writeKubeconfig(t, "a", map[string]string{"a": "https://127.0.0.1:1001"})
	second := writeKubeconfig(t, "b", map[string]string{"b": "https://127.0.0.1:1002", "c": "https://127.0.0.1:1003"})
	t.Setenv("KUBECONFIG", first+string(os.PathListSeparator)+second)
	tests := []struct {
		name string
		opts kubeconfigOptions
		want string
	}{
		{"current context of the first file", kubeconfigOptions{}, "https://127.0.0.1:1001"},
		{"context from the second file", kubeconfigOptions{context: "c"}, "https://127.0.0.1:1003"},
		{"flag replaces the variable", kubeconfigOptions{path: second}, "https://127.0.0.1:1002"},
		{"flag and context", kubeconfigOptions{path: second, context: "c"}, "https://127.0.0.1:1003"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := tt.opts.restConfig(false)
			if err != nil {
				t.Fatal(err)
			}
			if cfg == nil || cfg.Host != tt.want {
				t.Fatalf("config = %+v, want host %s", cfg, tt.want)
			}
		})
	}
	unknown := kubeconfigOptions{path: second, context: "a"}
	_, err := unknown.restConfig(false)
	if err == nil || !strings.Contains(err.Error(), second) || !strings.Contains(err.Error(), `context "a"`) {
		t.Errorf("unknown context: err = %v, want one naming the file and the context", err)
	}
}

// A hub is optional: with no flag, no $KUBECONFIG and no in-cluster config
// there is none (and ~/.kube/config is not taken for it).
func TestNoHubWithoutKubeconfig(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBECONFIG", "")
	cfg, err := (&kubeconfigOptions{}).restConfig(false)
	if err != nil || cfg != nil {
		t.Fatalf("restConfig(false) = %v, %v; want no hub", cfg, err)
	}
}

// unjoin reads the member's kubeconfig with the loading rules: the context
// named on the command line is the one it connects to.
func TestUnjoinUsesContextFromKubeconfigVariable(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBECONFIG", writeKubeconfig(t, "a", map[string]string{"a": "https://127.0.0.1:1", "b": "https://127.0.0.1:2"}))
	_, stderr := runCLI(t, 2, "unjoin", "edge-1", "--context", "b")
	if !strings.Contains(stderr, "127.0.0.1:2") {
		t.Errorf("unjoin did not connect to context b's server:\n%s", stderr)
	}
}
