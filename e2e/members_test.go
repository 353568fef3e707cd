package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/testenv"
)

// Keys propagit stamps on every object it applies.
const (
	labelManaged       = "propagit.io/managed"
	annotationTemplate = "propagit.io/template"
)

// kubeCtx bounds one API call to a member.
var kubeCtx = e2etest.KubeCtx

// getOrNil calls a typed client's Get; nil, nil when the object does not
// exist.
func getOrNil[T any](get func(context.Context, string, metav1.GetOptions) (*T, error), name string) (*T, error) {
	ctx, cancel := kubeCtx()
	defer cancel()
	obj, err := get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// getDeployment returns a Deployment, nil when it does not exist.
func getDeployment(m *testenv.Member, ns, name string) (*appsv1.Deployment, error) {
	return getOrNil(m.Client().AppsV1().Deployments(ns).Get, name)
}

// getService returns a Service, nil when it does not exist.
func getService(m *testenv.Member, ns, name string) (*corev1.Service, error) {
	return getOrNil(m.Client().CoreV1().Services(ns).Get, name)
}

// getConfigMap returns a ConfigMap, nil when it does not exist.
func getConfigMap(m *testenv.Member, ns, name string) (*corev1.ConfigMap, error) {
	return getOrNil(m.Client().CoreV1().ConfigMaps(ns).Get, name)
}

// getNamespace returns a Namespace, nil when it does not exist.
func getNamespace(m *testenv.Member, name string) (*corev1.Namespace, error) {
	return getOrNil(m.Client().CoreV1().Namespaces().Get, name)
}

// managedConfigMaps returns the names of the ConfigMaps in ns that carry
// propagit's managed label, by name, with their UIDs.
func managedConfigMaps(m *testenv.Member, ns string) (map[string]types.UID, error) {
	ctx, cancel := kubeCtx()
	defer cancel()
	list, err := m.Client().CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: labelManaged + "=true"})
	if err != nil {
		return nil, err
	}
	out := make(map[string]types.UID, len(list.Items))
	for _, c := range list.Items {
		out[c.Name] = c.UID
	}
	return out, nil
}

// replicasIs reports whether the Deployment exists with the given replicas.
func replicasIs(m *testenv.Member, ns, name string, want int32) (bool, string) {
	d, err := getDeployment(m, ns, name)
	switch {
	case err != nil:
		return false, fmt.Sprintf("%s: %v", m.Name, err)
	case d == nil:
		return false, fmt.Sprintf("%s: Deployment %s/%s not found", m.Name, ns, name)
	case d.Spec.Replicas == nil || *d.Spec.Replicas != want:
		return false, fmt.Sprintf("%s: Deployment %s/%s has replicas %v, want %d", m.Name, ns, name, e2etest.Deref(d.Spec.Replicas), want)
	}
	return true, ""
}

// imageIs reports whether the Deployment's first container runs image.
func imageIs(m *testenv.Member, ns, name, image string) (bool, string) {
	d, err := getDeployment(m, ns, name)
	switch {
	case err != nil:
		return false, fmt.Sprintf("%s: %v", m.Name, err)
	case d == nil:
		return false, fmt.Sprintf("%s: Deployment %s/%s not found", m.Name, ns, name)
	case len(d.Spec.Template.Spec.Containers) == 0 || d.Spec.Template.Spec.Containers[0].Image != image:
		return false, fmt.Sprintf("%s: Deployment %s/%s has image %q, want %q", m.Name, ns, name, firstImage(d), image)
	}
	return true, ""
}

func firstImage(d *appsv1.Deployment) string {
	if len(d.Spec.Template.Spec.Containers) == 0 {
		return ""
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// both combines conditions: it holds when all hold, and reports the first
// that does not.
func both(conds ...func() (bool, string)) func() (bool, string) {
	return func() (bool, string) {
		for _, c := range conds {
			if ok, msg := c(); !ok {
				return false, msg
			}
		}
		return true, ""
	}
}

// checkStamped fails the test unless obj carries propagit's managed label
// and template annotation.
func checkStamped(t testing.TB, what string, meta metav1.Object) {
	t.Helper()
	if meta.GetLabels()[labelManaged] != "true" {
		t.Errorf("%s: label %s=%q, want \"true\"", what, labelManaged, meta.GetLabels()[labelManaged])
	}
	if meta.GetAnnotations()[annotationTemplate] == "" {
		t.Errorf("%s: no %s annotation", what, annotationTemplate)
	}
}

// handmade is an object created by hand on a member, which propagit must
// never touch.
type handmade struct {
	m        *testenv.Member
	ns, name string
	uid      types.UID
	rv       string
}

// createHandmade creates ConfigMap ns/name on m without propagit's label.
func createHandmade(t testing.TB, m *testenv.Member, ns, name string) *handmade {
	t.Helper()
	ctx, cancel := kubeCtx()
	defer cancel()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"made-by": "hand"}},
		Data:       map[string]string{"note": "created by hand; propagit must leave it alone"},
	}
	got, err := m.Client().CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{FieldManager: "kubectl"})
	if err != nil {
		t.Fatalf("%s: failed to create ConfigMap %s/%s by hand: %v", m.Name, ns, name, err)
	}
	return &handmade{m: m, ns: ns, name: name, uid: got.UID, rv: got.ResourceVersion}
}

// check fails the test unless the object is still there, unchanged: same
// UID, same resourceVersion (nobody wrote it), no propagit label.
func (h *handmade) check(t testing.TB, when string) {
	t.Helper()
	cm, err := getConfigMap(h.m, h.ns, h.name)
	switch {
	case err != nil:
		t.Fatalf("%s: %s: %v", when, h.m.Name, err)
	case cm == nil:
		t.Fatalf("%s: %s: hand-made ConfigMap %s/%s was deleted", when, h.m.Name, h.ns, h.name)
	case cm.UID != h.uid:
		t.Fatalf("%s: %s: hand-made ConfigMap %s/%s was recreated (uid %s, was %s)", when, h.m.Name, h.ns, h.name, cm.UID, h.uid)
	case cm.ResourceVersion != h.rv:
		t.Fatalf("%s: %s: hand-made ConfigMap %s/%s was written (resourceVersion %s, was %s); managers: %s",
			when, h.m.Name, h.ns, h.name, cm.ResourceVersion, h.rv, managers(cm.ManagedFields))
	case cm.Labels[labelManaged] != "":
		t.Fatalf("%s: %s: hand-made ConfigMap %s/%s got label %s", when, h.m.Name, h.ns, h.name, labelManaged)
	}
}

func managers(fields []metav1.ManagedFieldsEntry) string {
	var names []string
	for _, f := range fields {
		names = append(names, f.Manager+"/"+string(f.Operation))
	}
	return strings.Join(names, ",")
}
