package pull

import (
	"encoding/base64"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"filippo.io/age"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/secrets/keys"
	"github.com/propagit/propagit/internal/secrets/sopstest"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// secretsPolicyYAML sends every Secret of ns to clusters.
func secretsPolicyYAML(ns string, clusters ...string) string {
	return e2etest.Policy{Kind: "Secret", Namespace: ns, Clusters: clusters, Scheduling: "Duplicated"}.YAML()
}

// putKeySecret writes the agent's decryption Secret in the member.
func putKeySecret(t *testing.T, c client.Client, ns, name, identity string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"member.agekey": []byte(identity + "\n")}}
	ctx, cancel := kubeCtx()
	defer cancel()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	err := c.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		err = c.Update(ctx, s) // Secrets allow an update without a resourceVersion
	}
	if err != nil {
		t.Fatal(err)
	}
}

// secretPassword returns Secret ns/name's decoded data.password on m.
func secretPassword(m *testenv.Member, ns, name string) (string, error) {
	ctx, cancel := kubeCtx()
	defer cancel()
	s, err := m.Client().CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return string(s.Data["password"]), nil
}

// TestSecretsPullAgentDecryptsInTheMember: the hub has no key at all; the
// pull agent decrypts with the age identity in a Secret of its own
// namespace (--decryption-secret), so the work branch carries only
// ciphertext. Rotating the key (the file re-encrypted to a new recipient,
// the agent's Secret updated) takes effect without restarting the agent.
func TestSecretsPullAgentDecryptsInTheMember(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Members: 1})
	pullM := env.Members[0]
	mc, err := client.New(pullM.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	idA, idB := sopstest.NewIdentity(), sopstest.NewIdentity()
	putKeySecret(t, mc, "propagit-system", "sops-age", idA.String())

	r := e2etest.HTTPRemote(t)
	ns := randomName("pullsecrets")
	pw := func(n int) string { return fmt.Sprintf("pull-pw-%d-%s", n, ns) }
	encrypt := func(password string, to *age.X25519Recipient) string {
		plain := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: %s\ndata:\n  password: %s\n", ns, base64.StdEncoding.EncodeToString([]byte(password)))
		doc, err := sopstest.Encrypt([]byte(plain), sopstest.KubernetesOptions, to)
		if err != nil {
			t.Fatal(err)
		}
		return string(doc)
	}
	f := newFleet(t, r.URL)
	f.write("clusters/"+pullM.Name+".yaml", e2etest.ClusterYAML(pullM.Name, clusterv1alpha1.SyncModePull))
	f.write("namespace.yaml", e2etest.NamespaceYAML(ns))
	f.write("policy.yaml", secretsPolicyYAML(ns, pullM.Name))
	f.write("db.yaml", encrypt(pw(1), idA.Recipient()))
	rev := f.CommitPush("encrypted db for a pull member")

	controllerStore := newGitStore(t, gitstore.Options{URL: r.URL})
	c := startController(t, hubSetup{SourceURL: r.URL, Works: controllerStore, Status: controllerStore, Options: controllerOptions()})
	aopts := agentOptions(pullM.Name)
	aopts.Keys = &keys.Source{Reader: mc, Namespace: "propagit-system", Name: "sops-age"}
	store := newGitStore(t, gitstore.Options{URL: r.URL})
	startLoop(t, "agent", newAgent(t, aopts, store, store, pullM.Config).Run)
	c.waitRevision(t, rev)
	eventually(t, converge, func() (bool, string) {
		got, err := secretPassword(pullM, ns, "db")
		return got == pw(1), fmt.Sprintf("db password %q (%v)", got, err)
	})

	// Rotation: the file is re-encrypted to B and the agent's Secret holds B.
	putKeySecret(t, mc, "propagit-system", "sops-age", idB.String())
	f.write("db.yaml", encrypt(pw(2), idB.Recipient()))
	f.CommitPush("db re-encrypted to the rotated key")
	eventually(t, converge, func() (bool, string) {
		got, err := secretPassword(pullM, ns, "db")
		return got == pw(2), fmt.Sprintf("db password %q (%v)", got, err)
	})

	out, err := exec.Command("git", "-C", r.Dir, "cat-file", "--batch-all-objects", "--batch").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "ENC[AES256_GCM") {
		t.Fatal("the repository holds no ciphertext: the leak check read nothing")
	}
	for n := 1; n <= 2; n++ {
		for _, v := range []string{pw(n), base64.StdEncoding.EncodeToString([]byte(pw(n)))} {
			if strings.Contains(string(out), v) {
				t.Errorf("the fleet repository (source, work branch, status refs) contains the plaintext %q", v)
			}
		}
	}
}
