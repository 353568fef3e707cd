package apply

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

var nsCounter atomic.Int64

// uniqueNS returns a namespace name no other test uses (not created).
func uniqueNS(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, nsCounter.Add(1))
}

// newTestManager returns a Manager for the test member.
func newTestManager(t testing.TB) *Manager {
	t.Helper()
	m, err := NewForConfig(member.Config, DefaultOptions())
	if err != nil {
		t.Fatalf("NewForConfig: %v", err)
	}
	return m
}

// plainClient is a client for the test member that is not the Manager's,
// standing for "someone else" (a person with kubectl, another controller).
func plainClient(t testing.TB) client.Client {
	t.Helper()
	c, err := client.New(member.Config, client.Options{})
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	return c
}

// obj parses a YAML manifest.
func obj(t testing.TB, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("bad manifest: %v\n%s", err, manifest)
	}
	return u
}

// managed stamps u the way render does.
func managed(u *unstructured.Unstructured, conflict string) *unstructured.Unstructured {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[workv1alpha1.LabelManaged] = "true"
	u.SetLabels(labels)
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[workv1alpha1.AnnotationTemplate] = strings.ToLower(u.GetKind()) + "/" + u.GetNamespace() + "/" + u.GetName()
	if conflict != "" {
		ann[workv1alpha1.AnnotationConflict] = conflict
	}
	u.SetAnnotations(ann)
	return u
}

func configMap(t testing.TB, ns, name, value string) *unstructured.Unstructured {
	return managed(obj(t, fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata: {name: %s, namespace: %s}
data: {key: %q}
`, name, ns, value)), "abort")
}

func deployment(t testing.TB, ns, name, image string) *unstructured.Unstructured {
	return managed(obj(t, fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: main, image: %[3]q}]
`, name, ns, image)), "abort")
}

// service is headless: the test members' service range is a /24, too small
// for the benchmark's hundreds of Services.
func service(t testing.TB, ns, name string) *unstructured.Unstructured {
	return managed(obj(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  clusterIP: None
  selector: {app: %[1]s}
  ports: [{name: http, port: 80}]
`, name, ns)), "abort")
}

func namespace(t testing.TB, name string) *unstructured.Unstructured {
	return managed(obj(t, fmt.Sprintf(`
apiVersion: v1
kind: Namespace
metadata: {name: %s}
`, name)), "abort")
}

// mustApply applies and fails the test on an error (not on failed objects).
func mustApply(t testing.TB, m *Manager, desired []*unstructured.Unstructured, inv []workv1alpha1.ObjectRef) *Result {
	t.Helper()
	res, err := m.Apply(t.Context(), desired, inv)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return res
}

// actions maps fmtRef (Kind.group/namespace/name) to the action of every result.
func actions(res *Result) map[string]workv1alpha1.Action {
	out := map[string]workv1alpha1.Action{}
	for _, o := range res.Objects {
		out[fmtRef(o.ObjectRef)] = o.Action
	}
	return out
}

// assertActions compares the actions of res with want, printing messages on
// a mismatch.
func assertActions(t testing.TB, res *Result, want map[string]workv1alpha1.Action) {
	t.Helper()
	if diff := cmp.Diff(want, actions(res)); diff != "" {
		t.Fatalf("actions (-want +got):\n%s\nresults: %+v", diff, res.Objects)
	}
}

// refs returns the references of objs, sorted.
func refs(objs ...*unstructured.Unstructured) []workv1alpha1.ObjectRef {
	out := make([]workv1alpha1.ObjectRef, 0, len(objs))
	for _, o := range objs {
		out = append(out, workv1alpha1.RefOf(o))
	}
	slices.SortFunc(out, compareRef)
	return out
}

// live reads the live copy of u; nil when it does not exist.
func live(t testing.TB, c client.Client, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	return liveGVK(t, c, u.GroupVersionKind(), u.GetNamespace(), u.GetName())
}

func liveGVK(t testing.TB, c client.Client, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(gvk)
	err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, got)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", gvk.Kind, ns, name, err)
	}
	return got
}

// messageOf returns the message of the result for Kind/namespace/name.
func messageOf(res *Result, ref string) string {
	for _, o := range res.Objects {
		if fmtRef(o.ObjectRef) == ref {
			return o.Message
		}
	}
	return ""
}
