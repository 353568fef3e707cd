package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/agent"
	"github.com/propagit/propagit/internal/join"
	"github.com/propagit/propagit/internal/testenv"
)

// TestHubTokenRenewsItselfAndTheSecret joins a pull member with the CR
// store (one real apiserver is both hub and member), mounts the hub
// kubeconfig as join prints it, and renews the agent's one-hour hub token:
// not before two thirds of its life, then with a new one of the same life,
// requested as the agent itself, which the hub client uses at once and
// which is written back into the member Secret with the member
// ServiceAccount's own rights (join limited to one namespace grants it that
// Secret and no other in propagit-system).
func TestHubTokenRenewsItselfAndTheSecret(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	m := env.Members[0]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := join.DefaultOptions()
	opts.Name, opts.Mode, opts.Hub, opts.HubTokenExpiration, opts.CheckTimeout = "edge-1", join.ModePull, true, time.Hour, 15*time.Second
	// Limited to one namespace, the member ServiceAccount may touch no
	// Secret in propagit-system but the one holding its hub kubeconfig.
	opts.Namespaces = []string{"apps"}
	if _, err := join.Join(ctx, m.Config, opts); err != nil {
		t.Fatal(err)
	}
	id, err := join.JoinHub(ctx, m.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := join.RenderHubSecret(id)
	if err != nil {
		t.Fatal(err)
	}
	var mounted corev1.Secret
	if err := yaml.Unmarshal(doc, &mounted); err != nil {
		t.Fatal(err)
	}
	admin := m.Client()
	if _, err := admin.CoreV1().Secrets(mounted.Namespace).Create(ctx, &mounted, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The agent's own member identity writes the Secret back.
	memberCfg := serviceAccountConfig(ctx, t, m.Config, join.Namespace, join.ServiceAccount)
	member, err := client.New(memberCfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hubCfg, err := clientcmd.RESTConfigFromKubeConfig(id.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	original := hubCfg.BearerToken
	dir := t.TempDir()
	h, err := agent.KeepHubToken(hubCfg, dir)
	if err != nil || h == nil {
		t.Fatalf("KeepHubToken = %v, %v", h, err)
	}
	if hubCfg.BearerTokenFile != filepath.Join(dir, "hub-token") {
		t.Fatalf("hub config reads its token from %q", hubCfg.BearerTokenFile)
	}
	h.Secret, h.Member = types.NamespacedName{Namespace: join.Namespace, Name: join.HubSecretName}, member

	early, err := h.Once(ctx, time.Now().Add(35*time.Minute))
	if err != nil || early.Renewed {
		t.Fatalf("renewed %v (err %v) with more than a third of the life left", early.Renewed, err)
	}
	due, err := h.Once(ctx, time.Now().Add(41*time.Minute))
	if err != nil || !due.Renewed {
		t.Fatalf("not renewed with less than a third of the life left (err %v)", err)
	}
	if life := time.Until(due.Expires); life < 55*time.Minute || life > 61*time.Minute {
		t.Errorf("renewed token lives %s, want about an hour", life)
	}
	renewed, err := os.ReadFile(h.File)
	if err != nil {
		t.Fatal(err)
	}
	if string(renewed) == original || len(renewed) == 0 {
		t.Fatal("the token file still holds the original token")
	}
	// The hub accepts the new token as the agent's ServiceAccount.
	if got := whoAmI(ctx, t, &rest.Config{Host: hubCfg.Host, TLSClientConfig: hubCfg.TLSClientConfig, BearerToken: string(renewed)}); got != "system:serviceaccount:"+id.Namespace+":"+join.HubAgent {
		t.Errorf("the renewed token authenticates as %q", got)
	}
	// A restart reads the renewed token from the Secret.
	var stored corev1.Secret
	if err := member.Get(ctx, h.Secret, &stored); err != nil {
		t.Fatal(err)
	}
	restarted, err := clientcmd.RESTConfigFromKubeConfig(stored.Data["kubeconfig"])
	if err != nil {
		t.Fatal(err)
	}
	if restarted.BearerToken != string(renewed) || restarted.Host != hubCfg.Host {
		t.Errorf("the Secret's kubeconfig holds another token or server (%s)", restarted.Host)
	}

	// A Secret replaced meanwhile (a new join) is not overwritten.
	stored.Data["kubeconfig"] = []byte(strings.ReplaceAll(string(stored.Data["kubeconfig"]), string(renewed), "someone-elses-token"))
	if err := admin.CoreV1().Secrets(stored.Namespace).Delete(ctx, stored.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	stored.ResourceVersion = ""
	if _, err := admin.CoreV1().Secrets(stored.Namespace).Create(ctx, &stored, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	again, err := h.Once(ctx, time.Now().Add(50*time.Minute))
	if err == nil || !again.Renewed || !strings.Contains(err.Error(), "no longer holds the agent's token") {
		t.Errorf("renewal over a replaced Secret: renewed %v, err %v", again.Renewed, err)
	}
	var kept corev1.Secret
	if err := member.Get(ctx, h.Secret, &kept); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kept.Data["kubeconfig"]), "someone-elses-token") {
		t.Error("the replaced Secret was overwritten")
	}
}

// TestKeepHubTokenLeavesOtherCredentialsAlone: only a plain bearer token
// is moved into a renewable file.
func TestKeepHubTokenLeavesOtherCredentialsAlone(t *testing.T) {
	for name, cfg := range map[string]*rest.Config{
		"client certificate": {Host: "https://hub", TLSClientConfig: rest.TLSClientConfig{CertData: []byte("c"), KeyData: []byte("k")}},
		"token file":         {Host: "https://hub", BearerToken: "t", BearerTokenFile: "/var/run/token"},
	} {
		h, err := agent.KeepHubToken(cfg, t.TempDir())
		if err != nil || h != nil {
			t.Errorf("%s: KeepHubToken = %v, %v; want nothing to renew", name, h, err)
		}
	}
}

func serviceAccountConfig(ctx context.Context, t *testing.T, admin *rest.Config, ns, name string) *rest.Config {
	t.Helper()
	tok, err := kubernetes.NewForConfigOrDie(admin).CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = tok.Status.Token
	return cfg
}

func whoAmI(ctx context.Context, t *testing.T, cfg *rest.Config) string {
	t.Helper()
	r, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status.UserInfo.Username
}
