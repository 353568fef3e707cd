package join

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
)

// TestJoinAgeKey: join --age-key creates the member's age key once and
// keeps it on a second join; the Cluster carries its recipient and the
// pull agent is told to decrypt with it; unjoin leaves the key.
func TestJoinAgeKey(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	m := env.Members[0]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", m.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Name, opts.Mode, opts.AgeKey, opts.CheckTimeout = "edge-1", ModePull, true, 15*time.Second
	first, err := Join(ctx, cfg, opts)
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	if !strings.HasPrefix(first.AgeRecipient, "age1") {
		t.Fatalf("recipient %q", first.AgeRecipient)
	}
	second, err := Join(ctx, cfg, opts)
	if err != nil || second.AgeRecipient != first.AgeRecipient {
		t.Fatalf("second join: %v, recipient %q, want the key kept (%q)", err, second.AgeRecipient, first.AgeRecipient)
	}
	man, err := Render(opts, second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(man.Cluster), workv1alpha1.AnnotationAgeRecipient+": "+first.AgeRecipient) {
		t.Errorf("Cluster lacks the recipient:\n%s", man.Cluster)
	}
	if !strings.Contains(string(man.Agent), "--decryption-secret="+AgeKeySecret) {
		t.Errorf("agent lacks --decryption-secret:\n%s", man.Agent)
	}
	if _, err := Unjoin(ctx, cfg); err != nil {
		t.Fatalf("Unjoin: %v", err)
	}
	if _, err := m.Client().CoreV1().Secrets(Namespace).Get(ctx, AgeKeySecret, metav1.GetOptions{}); err != nil {
		t.Errorf("after unjoin the age key is gone: %v", err)
	}
}
