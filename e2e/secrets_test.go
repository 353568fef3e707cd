package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"filippo.io/age"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/secrets/keys"
	"github.com/propagit/propagit/internal/secrets/sopstest"
	"github.com/propagit/propagit/internal/testenv"
)

// secretYAML encrypts the Secret ns/name holding password to recipients,
// as `sops encrypt --age … --encrypted-regex '^(data|stringData)$'` does.
func secretYAML(t *testing.T, ns, name, password string, recipients ...*age.X25519Recipient) string {
	t.Helper()
	plain := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\ntype: Opaque\ndata:\n  password: %s\n",
		name, ns, base64.StdEncoding.EncodeToString([]byte(password)))
	doc, err := sopstest.Encrypt([]byte(plain), sopstest.KubernetesOptions, recipients...)
	if err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

// secretsPolicyYAML propagates every Secret of ns to clusters.
func secretsPolicyYAML(ns string, clusters ...string) string {
	return e2etest.Policy{Kind: "Secret", Namespace: ns, Clusters: clusters}.YAML()
}

// passwordOn returns the decoded data.password of Secret ns/name on m,
// "" when absent.
func passwordOn(t *testing.T, m *testenv.Member, ns, name string) string {
	t.Helper()
	s, err := getOrNil(m.Client().CoreV1().Secrets(ns).Get, name)
	if err != nil {
		t.Fatalf("%s: read Secret %s/%s: %v", m.Name, ns, name, err)
	}
	if s == nil {
		return ""
	}
	return string(s.Data["password"])
}

// objectResult returns the status entry of Secret ns/name on cluster.
func objectResult(st *workv1alpha1.WorkStatus, kind, ns, name string) *workv1alpha1.ObjectResult {
	for i := range st.Objects {
		o := &st.Objects[i]
		if o.Kind == kind && o.Namespace == ns && o.Name == name {
			return o
		}
	}
	return nil
}

// TestSecretsEncryptedUntilTheirMember: SOPS/age-encrypted Secrets in the
// fleet repository reach two push members decrypted, each member with its
// own key (files of --age-key-dir). A Secret encrypted to member1's key
// only reaches member1; member2 reports the missing key, keeps its previous
// value, and still applies the other objects. A tampered file is refused
// with a MAC error everywhere and changes nothing. `diff -o markdown`
// names the changed key without decrypting. No plaintext (nor its base64)
// is found in the work branch, the controller log, `status`, `diff` or
// `explain`.
func TestSecretsEncryptedUntilTheirMember(t *testing.T) {
	t.Parallel()
	members := sharedMembers(t, 2)
	m1, m2 := members[0], members[1]
	idA, idB := sopstest.NewIdentity(), sopstest.NewIdentity()
	keyDir := t.TempDir()
	for name, id := range map[string]*age.X25519Identity{m1.Name: idA, m2.Name: idB} {
		if err := os.WriteFile(filepath.Join(keyDir, name+".agekey"), []byte(id.String()+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ns := randomNamespace("secrets")
	pw := func(n int) string { return fmt.Sprintf("pw-%d-%s", n, ns) }
	remote := e2etest.HTTPRemote(t)
	co := newCheckout(t, remote)
	co.ConfigMapFleet(ns, m1.Name, m2.Name)
	co.Write(fleetDir+"/secrets-policy.yaml", secretsPolicyYAML(ns, m1.Name, m2.Name))
	co.Write(fleetDir+"/db.yaml", secretYAML(t, ns, "db", pw(1), idA.Recipient(), idB.Recipient()))
	co.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML(ns, "app", "v1"))
	rev1 := co.CommitPush("db password 1, encrypted to both members")

	opts := controllerOptions()
	opts.Keys = &keys.Source{Dir: keyDir}
	ctl := startControllerOpts(t, newSetup(t, remote, members...), opts)
	status := newStatusReader(t, remote)
	status.waitApplied(rev1, m1.Name, m2.Name)
	for _, m := range members {
		if got := passwordOn(t, m, ns, "db"); got != pw(1) {
			t.Fatalf("%s: db password = %q, want the decrypted value", m.Name, got)
		}
	}

	// Re-encrypted to member1 only: member2 cannot decrypt, keeps value 1,
	// and still applies app v2.
	co.Write(fleetDir+"/db.yaml", secretYAML(t, ns, "db", pw(2), idA.Recipient()))
	co.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML(ns, "app", "v2"))
	rev2 := co.CommitPush("db password 2, encrypted to member1 only")
	eventually(t, converge, func() (bool, string) {
		st, err := status.get(m2.Name)
		if err != nil {
			return false, err.Error()
		}
		o := objectResult(st, "Secret", ns, "db")
		cm, _ := getConfigMap(m2, ns, "app")
		ok := o != nil && o.Action == workv1alpha1.ActionFailed && strings.Contains(o.Message, idA.Recipient().String()) &&
			strings.Contains(o.Message, "no matching decryption key") && cm != nil && cm.Data["value"] == "v2" &&
			passwordOn(t, m1, ns, "db") == pw(2)
		return ok, fmt.Sprintf("member2 db result %+v, app %v; %s", o, cm, e2etest.DescribeStatus(st))
	})
	if got := passwordOn(t, m2, ns, "db"); got != pw(1) {
		t.Errorf("member2 db password = %q, want its previous value", got)
	}

	// Tampered: a label changed in the encrypted file after sops wrote it
	// (the MAC covers it). Both members refuse it and keep their values.
	tampered := strings.Replace(secretYAML(t, ns, "db", pw(3), idA.Recipient(), idB.Recipient()),
		"namespace: "+ns+"\n", "namespace: "+ns+"\n    labels: {team: mallory}\n", 1)
	if !strings.Contains(tampered, "mallory") {
		t.Fatal("the tampering did not apply")
	}
	co.Write(fleetDir+"/db.yaml", tampered)
	co.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML(ns, "app", "v3"))
	co.CommitPush("tampered db")
	for _, m := range members {
		eventually(t, converge, func() (bool, string) {
			st, err := status.get(m.Name)
			if err != nil {
				return false, err.Error()
			}
			o := objectResult(st, "Secret", ns, "db")
			cm, _ := getConfigMap(m, ns, "app")
			return o != nil && o.Action == workv1alpha1.ActionFailed && strings.Contains(o.Message, "MAC mismatch") && cm != nil && cm.Data["value"] == "v3",
				fmt.Sprintf("%s db result %+v, app %v", m.Name, o, cm)
		})
	}
	if a, b := passwordOn(t, m1, ns, "db"), passwordOn(t, m2, ns, "db"); a != pw(2) || b != pw(1) {
		t.Errorf("after the tampered commit: member1 %q, member2 %q; want their previous values", a, b)
	}

	// diff of rev1..rev2 names the changed key without decrypting.
	md := runCLI(t, converge, "diff", filepath.Join(co.Dir, fleetDir), "--base", rev1, "--head", rev2, "-o", "markdown")
	if !strings.Contains(md.stdout, "encrypted Secret/"+ns+"/db changed (keys: password)") {
		t.Errorf("diff -o markdown lacks the encrypted change:\n%s", md)
	}
	st := runCLI(t, converge, "status", "-o", "json", "--repo", remote.URL)
	ex := runCLI(t, converge, "explain", "secret/db", filepath.Join(co.Dir, fleetDir), "-n", ns)
	if ex.code != 0 || !strings.Contains(ex.stdout, m2.Name) {
		t.Errorf("explain: %s", ex)
	}
	if !strings.Contains(st.stdout, "MAC mismatch") || !strings.Contains(st.stdout, m2.Name) {
		t.Errorf("status -o json does not say why db is not applied: %s", st)
	}
	ctl.stop()
	leaks := map[string]string{
		"controller log": strings.Join(ctl.logs.all(), "\n"),
		"status":         st.stdout + st.stderr,
		"diff":           md.stdout + md.stderr,
		"explain":        ex.stdout + ex.stderr,
		"git objects":    gitObjects(t, remote.Dir),
	}
	for where, text := range leaks {
		for n := 1; n <= 3; n++ {
			for _, v := range []string{pw(n), base64.StdEncoding.EncodeToString([]byte(pw(n)))} {
				if strings.Contains(text, v) {
					t.Errorf("%s contains the plaintext %q", where, v)
				}
			}
		}
	}
	if !strings.Contains(leaks["git objects"], "ENC[AES256_GCM") {
		t.Error("the git objects hold no ciphertext: the leak check read nothing")
	}
}

// gitObjects returns the content of every object in the bare repository
// dir — source commits, the work branch, status refs — for leak checks.
func gitObjects(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "cat-file", "--batch-all-objects", "--batch").Output()
	if err != nil {
		t.Fatalf("git cat-file: %v", err)
	}
	return string(out)
}

// TestSecretsCRStoreAndHubKeys: with Works kept as Work CRs on a hub, each
// push member's key is the hub Secret sops-age-<cluster> beside its
// credentials. A Secret encrypted to member2 only reaches member2; member1
// reports the missing key. The Work CRs hold the ciphertext, never the
// plaintext.
func TestSecretsCRStoreAndHubKeys(t *testing.T) {
	t.Parallel()
	members := sharedMembers(t, 2)
	m1, m2 := members[0], members[1]
	hubMember := testenv.Start(t, testenv.Options{Members: 1}).Members[0] // its Work CRs' namespaces are named after the clusters
	hub := e2etest.StartHub(t, hubMember, converge, pollEvery)
	hubNS := randomNamespace("propagit")
	e2etest.CreateNamespace(t, hub, hubNS)
	e2etest.CreateNamespace(t, hub, quickstartSecretNamespace)
	idA, idB := sopstest.NewIdentity(), sopstest.NewIdentity()
	for name, id := range map[string]*age.X25519Identity{m1.Name: idA, m2.Name: idB} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: quickstartSecretNamespace, Name: keys.MemberSecretPrefix + name},
			Data: map[string][]byte{name + ".agekey": []byte(id.String())}}
		ctx, cancel := kubeCtx()
		err := hub.Create(ctx, s)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	ns := randomNamespace("crsecrets")
	both, onlyB := "both-"+ns, "only-b-"+ns
	remote := e2etest.HTTPRemote(t)
	co := newCheckout(t, remote)
	co.ConfigMapFleet(ns, m1.Name, m2.Name)
	co.Write(fleetDir+"/secrets-policy.yaml", secretsPolicyYAML(ns, m1.Name, m2.Name))
	co.Write(fleetDir+"/both.yaml", secretYAML(t, ns, "both", both, idA.Recipient(), idB.Recipient()))
	co.Write(fleetDir+"/only-b.yaml", secretYAML(t, ns, "only-b", onlyB, idB.Recipient()))
	co.Write(fleetDir+"/app.yaml", e2etest.ConfigMapYAML(ns, "app", "v1"))
	co.CommitPush("encrypted Secrets, Work CRs")

	s := newSetup(t, remote, members...)
	s.Hub, s.HubNamespace = hub, hubNS
	opts := controllerOptions()
	opts.Keys = &keys.Source{Reader: hub, MemberNamespace: quickstartSecretNamespace}
	startControllerOpts(t, s, opts)
	status := newCRStatusReader(t, hub, hubNS)
	eventually(t, converge, func() (bool, string) {
		st, err := status.get(m1.Name)
		if err != nil {
			return false, err.Error()
		}
		o := objectResult(st, "Secret", ns, "only-b")
		cm, _ := getConfigMap(m1, ns, "app")
		return o != nil && o.Action == workv1alpha1.ActionFailed && strings.Contains(o.Message, idB.Recipient().String()) &&
				cm != nil && passwordOn(t, m1, ns, "both") == both && passwordOn(t, m2, ns, "only-b") == onlyB && passwordOn(t, m2, ns, "both") == both,
			fmt.Sprintf("member1 only-b %+v, app %v", o, cm)
	})
	if got := passwordOn(t, m1, ns, "only-b"); got != "" {
		t.Errorf("member1 has only-b = %q, want nothing", got)
	}

	ws, err := status.works()
	if err != nil {
		t.Fatal(err)
	}
	dump, err := json.Marshal(ws)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dump), "ENC[AES256_GCM") {
		t.Fatalf("the Work CRs hold no ciphertext: %d bytes read", len(dump))
	}
	for _, v := range []string{both, onlyB, base64.StdEncoding.EncodeToString([]byte(both)), base64.StdEncoding.EncodeToString([]byte(onlyB))} {
		if strings.Contains(string(dump), v) {
			t.Errorf("a Work CR contains the plaintext %q", v)
		}
	}
}
