package apply

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"filippo.io/age"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
	"github.com/propagit/propagit/internal/secrets"
	"github.com/propagit/propagit/internal/secrets/sopstest"
)

// interpreterFor compiles scripts (operation → source) for one kind.
func interpreterFor(t *testing.T, apiVersion, kind string, scripts map[interpret.Operation]string) *interpret.Interpreter {
	t.Helper()
	var compiled []*interpret.Script
	line := 10
	for op, src := range scripts {
		s, err := interpret.Compile("hostile", op, src, "ric.yaml", line)
		if err != nil {
			t.Fatal(err)
		}
		compiled = append(compiled, s)
		line += 10
	}
	return interpret.New(interpret.DefaultLimits(), []interpret.Customization{
		{Name: "hostile", APIVersion: apiVersion, Kind: kind, Scripts: compiled}})
}

// podRetain turns whatever it retains into a privileged Pod mounting the
// node's root in kube-system, carrying the desired object's metadata
// otherwise (finding 1 of issue #25).
const podRetain = `function Retain(desired, observed)
  return {apiVersion = "v1", kind = "Pod",
    metadata = {name = "pwn-` + "%s" + `", namespace = "kube-system",
      labels = desired.metadata.labels, annotations = desired.metadata.annotations},
    spec = {hostPID = true, hostNetwork = true,
      containers = {{name = "x", image = "busybox", securityContext = {privileged = true},
        volumeMounts = {{name = "root", mountPath = "/host"}}}},
      volumes = {{name = "root", hostPath = {path = "/"}}}}}
end`

// TestHostileRetentionCannotReplaceObject: a Retain script for ConfigMaps
// that returns a privileged Pod in kube-system fails the ConfigMap, with
// a message naming the script and what it changed; no Pod is created and
// the ConfigMap keeps its value. A script that writes a value of its own
// into the ConfigMap fails it too.
func TestHostileRetentionCannotReplaceObject(t *testing.T) {
	m, c := newTestManager(t), plainClient(t)
	ns := uniqueNS("hostile-retain")
	m.Interpret(interpreterFor(t, "v1", "ConfigMap", map[interpret.Operation]string{
		interpret.Retention: fmt.Sprintf(podRetain, ns)}))
	res := mustApply(t, m, []*unstructured.Unstructured{configMap(t, ns, "conf", "a")}, nil)
	ref := "ConfigMap/" + ns + "/conf"
	assertActions(t, res, map[string]workv1alpha1.Action{ref: workv1alpha1.ActionCreated})

	again := mustApply(t, m, []*unstructured.Unstructured{configMap(t, ns, "conf", "b")}, res.Inventory)
	assertActions(t, again, map[string]workv1alpha1.Action{ref: workv1alpha1.ActionFailed})
	if msg := messageOf(again, ref); !strings.Contains(msg, "Retain (ric.yaml:10) changed kind") {
		t.Errorf("message %q does not name the script and the changed kind", msg)
	}
	if pod := liveGVK(t, c, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "kube-system", "pwn-"+ns); pod != nil {
		t.Fatalf("the Retain script created Pod kube-system/%s", pod.GetName())
	}
	if v, _, _ := unstructured.NestedString(live(t, c, configMap(t, ns, "conf", "")).Object, "data", "key"); v != "a" {
		t.Errorf("live data.key = %q, want the value before the refused apply", v)
	}

	m.Interpret(interpreterFor(t, "v1", "ConfigMap", map[interpret.Operation]string{
		interpret.Retention: "function Retain(d, o)\n  d.data.key = 'evil'\n  return d\nend"}))
	own := mustApply(t, m, []*unstructured.Unstructured{configMap(t, ns, "conf", "b")}, again.Inventory)
	if msg := messageOf(own, ref); !strings.Contains(msg, "changed data.key to neither its desired nor its live value") {
		t.Errorf("a value of the script's own: %s %q", actions(own)[ref], msg)
	}
	m.Interpret(nil)
	mustApply(t, m, nil, own.Inventory)
}

// leakyScripts raise or reflect a Secret's data.password; on a ConfigMap
// the same scripts read data.key.
func leakyScripts(field string) map[interpret.Operation]string {
	return map[interpret.Operation]string{
		interpret.HealthInterpretation: "function InterpretHealth(o)\n  error('leak:' .. o.data." + field + ")\nend",
		interpret.StatusReflection:     "function ReflectStatus(o)\n  return {leak = o.data." + field + "}\nend",
		interpret.Retention:            "function Retain(d, o)\n  error('leak:' .. o.data." + field + ")\nend",
	}
}

// TestHostileScriptsNeverReadSecrets: health, status-reflection and
// retention scripts for Secrets that raise or return data.password never
// run on a decrypted Secret: it is applied, its health is kstatus's and
// nothing of it is reflected. A ConfigMap the member decrypted
// (--decrypt-kinds) is skipped the same way, even by a Manager not told
// its kind; a plain ConfigMap's scripts run, but their error text is not
// kept, only where they are.
func TestHostileScriptsNeverReadSecrets(t *testing.T) {
	id := sopstest.NewIdentity()
	keys, err := secrets.NewKeyring(map[string][]byte{"member.agekey": []byte(id.String())}, []string{"ConfigMap"})
	if err != nil {
		t.Fatal(err)
	}
	m, ns := managerWithKeys(t, keys), uniqueNS("hostile-scripts")
	password := "s3cret-" + ns
	leaked := []string{password, base64.StdEncoding.EncodeToString([]byte(password))}

	secretScripts := interpreterFor(t, "v1", "Secret", leakyScripts("password"))
	m.Interpret(secretScripts)
	db := sealedSecret(t, ns, "db", password, id.Recipient())
	sres := mustApply(t, m, []*unstructured.Unstructured{db}, nil)
	sres = mustApply(t, m, []*unstructured.Unstructured{db}, sres.Inventory) // live now: Retain would run
	assertActions(t, sres, map[string]workv1alpha1.Action{"Secret/" + ns + "/db": workv1alpha1.ActionUnchanged})
	assertNoLeak(t, m, sres, leaked, workv1alpha1.HealthCurrent)

	m.Interpret(interpreterFor(t, "v1", "ConfigMap", leakyScripts("key")))
	conf := sealedConfigMap(t, ns, "sealed-conf", password, id)
	res := mustApply(t, m, []*unstructured.Unstructured{conf}, nil)
	res = mustApply(t, m, []*unstructured.Unstructured{conf}, res.Inventory)
	assertActions(t, res, map[string]workv1alpha1.Action{"ConfigMap/" + ns + "/sealed-conf": workv1alpha1.ActionUnchanged})
	assertNoLeak(t, m, res, []string{password}, workv1alpha1.HealthCurrent)
	// A Manager that does not know ConfigMaps may be decrypted (a
	// restarted agent) reads the mark on the live object.
	fresh := newTestManager(t)
	fresh.Interpret(interpreterFor(t, "v1", "ConfigMap", leakyScripts("key")))
	assertNoLeak(t, fresh, res, []string{password}, workv1alpha1.HealthCurrent)

	plain := configMap(t, ns, "plain", "visible-"+ns)
	pres := mustApply(t, fresh, []*unstructured.Unstructured{plain}, nil)
	health, err := fresh.Health(t.Context(), pres.Inventory)
	if err != nil || len(health) != 1 {
		t.Fatalf("Health: %v %+v", err, health)
	}
	msg := health[0].Message
	if strings.Contains(msg, "visible-") || !strings.Contains(msg, "/hostile healthInterpretation (script at ric.yaml:") ||
		!strings.Contains(msg, "details withheld") {
		t.Errorf("health message of a failing script on a plain ConfigMap = %q, want its place and class only", msg)
	}
	mustApply(t, m, nil, append(append(sres.Inventory, res.Inventory...), pres.Inventory...))
}

// sealedConfigMap is a ConfigMap whose data.key is encrypted.
func sealedConfigMap(t *testing.T, ns, name, value string, id *age.X25519Identity) *unstructured.Unstructured {
	t.Helper()
	plain := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {key: %q}\n", name, ns, value)
	doc, err := sopstest.Encrypt([]byte(plain), sopstest.KubernetesOptions, id.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	u := managed(obj(t, string(doc)), "abort")
	ann := u.GetAnnotations()
	ann[workv1alpha1.AnnotationSOPSDocument] = string(doc)
	u.SetAnnotations(ann)
	return u
}

// assertNoLeak reads the health of res's inventory and checks that no
// result (message or reflected status) holds any of leaked, and that the
// health is want's (the default interpretation).
func assertNoLeak(t *testing.T, m *Manager, res *Result, leaked []string, want workv1alpha1.Health) {
	t.Helper()
	health, err := m.Health(t.Context(), res.Inventory)
	if err != nil {
		t.Fatal(err)
	}
	all := append(append([]workv1alpha1.ObjectResult{}, health...), res.Objects...)
	data, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range leaked {
		if strings.Contains(string(data), v) {
			t.Errorf("a script's output reached the results: %s", data)
		}
	}
	for _, h := range health {
		if h.Health != want || h.Status != nil {
			t.Errorf("%s: health %s (%s), reflected %v; want %s from the default interpretation and nothing reflected",
				fmtRef(h.ObjectRef), h.Health, h.Message, h.Status, want)
		}
	}
}

// refusedPlaintext stands for a keyring whose plaintext the apiserver
// refuses: it decrypts every object into a Secret whose data.pin is the
// number secretNumber, which the apiserver quotes in its error.
type refusedPlaintext struct{}

const secretNumber = 7390255118

func (refusedPlaintext) Decrypt(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	delete(out.Object, "sops")
	ann := out.GetAnnotations()
	delete(ann, workv1alpha1.AnnotationSOPSDocument)
	out.SetAnnotations(ann)
	out.Object["data"] = map[string]any{"pin": int64(secretNumber)}
	return out, nil
}

// TestHostileDecryptedApplyErrorWithheld: a decrypted Secret the apiserver
// refuses fails with the reason code only; the apiserver's message, which
// quotes the value, is not kept.
func TestHostileDecryptedApplyErrorWithheld(t *testing.T) {
	m, ns := managerWithKeys(t, refusedPlaintext{}), uniqueNS("hostile-withheld")
	db := sealedSecret(t, ns, "db", "unused", sopstest.NewIdentity().Recipient())
	res := mustApply(t, m, []*unstructured.Unstructured{db}, nil)
	ref := "Secret/" + ns + "/db"
	assertActions(t, res, map[string]workv1alpha1.Action{ref: workv1alpha1.ActionFailed})
	msg := messageOf(res, ref)
	if strings.Contains(msg, fmt.Sprint(secretNumber)) || !strings.Contains(msg, "details withheld: the object holds decrypted values") {
		t.Errorf("message %q: want the reason only, without the value", msg)
	}
}
