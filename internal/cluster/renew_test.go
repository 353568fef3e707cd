package cluster_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/cluster"
	"github.com/propagit/propagit/internal/join"
	"github.com/propagit/propagit/internal/testenv"
)

// TestRenewReplacesAShortLivedToken joins a real member with a one-hour
// push token, stores the credential Secret join prints, and renews it: not
// before two thirds of its life, then with a new token of the same life
// that the member accepts, written to the same Secret.
func TestRenewReplacesAShortLivedToken(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	m := env.Members[0]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", m.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	opts := join.DefaultOptions()
	opts.Name, opts.TokenExpiration, opts.CheckTimeout = "m1", time.Hour, 15*time.Second
	res, err := join.Join(ctx, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := join.Render(opts, res)
	if err != nil {
		t.Fatal(err)
	}
	var secret corev1.Secret
	if err := yaml.Unmarshal(manifests.Secret, &secret); err != nil {
		t.Fatal(err)
	}
	// The member doubles as the hub that holds the credential.
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	hub, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secret.Namespace}}); err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, &secret); err != nil {
		t.Fatal(err)
	}
	creds := &cluster.Credentials{Hub: hub, Writer: hub}
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Spec: clusterv1alpha1.ClusterSpec{APIEndpoint: res.APIEndpoint}}

	early, err := creds.Renew(ctx, cl, time.Now().Add(35*time.Minute))
	if err != nil || early.Renewed {
		t.Fatalf("renewed %v (err %v) with more than a third of the life left", early.Renewed, err)
	}
	if d := early.Expires.Sub(res.TokenExpiry); d < -time.Second || d > time.Second {
		t.Errorf("expiry read from the token %s, join said %s", early.Expires, res.TokenExpiry)
	}
	due, err := creds.Renew(ctx, cl, time.Now().Add(41*time.Minute))
	if err != nil || !due.Renewed {
		t.Fatalf("not renewed with less than a third of the life left (err %v)", err)
	}
	if life := time.Until(due.Expires); life < 55*time.Minute || life > 61*time.Minute {
		t.Errorf("renewed token lives %s, want about an hour", life)
	}
	var stored corev1.Secret
	if err := hub.Get(ctx, client.ObjectKeyFromObject(&secret), &stored); err != nil {
		t.Fatal(err)
	}
	token := string(stored.Data[cluster.KeyToken])
	if token == "" || token == res.Token {
		t.Fatal("the Secret does not hold a new token")
	}
	renewed, err := creds.Config(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if renewed.BearerToken != token {
		t.Fatal("Config does not use the renewed token")
	}
	if _, err := kubernetes.NewForConfigOrDie(renewed).CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the member refuses the renewed token: %v", err)
	}
}
