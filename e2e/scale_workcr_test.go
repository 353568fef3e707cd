package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
)

// TestScaleFiveThousandObjectsThroughWorkCRs gives one real member 5,000
// ConfigMaps with Works kept as Work custom resources on a real hub: about
// 4 MB of manifests, more than etcd takes in one object. The Work is split
// into parts, the member gets every object, and its status records the
// revision applied and healthy.
func TestScaleFiveThousandObjectsThroughWorkCRs(t *testing.T) {
	const objects = 5000
	env := testenv.Start(t, testenv.Options{Members: 2})
	m, hubMember := env.Members[0], env.Members[1]
	hub := e2etest.StartHub(t, hubMember, converge, pollEvery)
	hubNS := randomNamespace("propagit")
	e2etest.CreateNamespace(t, hub, hubNS)
	remote := e2etest.HTTPRemote(t)
	co := newCheckout(t, remote)
	ns := randomNamespace("many")
	co.Write(fleetDir+"/cluster.yaml", clusterYAML(m.Name))
	co.Write(fleetDir+"/ns.yaml", e2etest.NamespaceYAML(ns))
	var b strings.Builder
	for i := range objects {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%05d, namespace: %s}\ndata: {value: %q}\n", i, ns, strings.Repeat("v", 400))
	}
	co.Write(fleetDir+"/many.yaml", b.String())
	co.Write(fleetDir+"/policy.yaml", configMapsPolicyYAML(ns, m.Name))
	rev := co.CommitPush("5,000 ConfigMaps")
	s := newSetup(t, remote, m)
	s.Hub, s.HubNamespace = hub, hubNS
	opts := controllerOptions()
	opts.Apply.QPS, opts.Apply.Burst = 500, 1000
	started := time.Now()
	startControllerOpts(t, s, opts)

	memberNS, err := workv1alpha1.MemberNamespace(m.Name)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Minute, func() (bool, string) {
		var l workv1alpha1.WorkList
		if err := hub.List(t.Context(), &l); err != nil {
			return false, err.Error()
		}
		n := 0
		for _, w := range l.Items {
			if w.Namespace == memberNS {
				n++
			}
		}
		return n > 1, fmt.Sprintf("%d Work objects in %s", n, memberNS)
	})
	reader := newCRStatusReader(t, hub, hubNS)
	took := eventuallyEvery(t, 10*time.Minute, time.Second, func() (bool, string) {
		st, err := reader.get(m.Name)
		if err != nil {
			return false, err.Error()
		}
		healthy := 0
		for _, o := range st.Objects {
			if o.Health == workv1alpha1.HealthCurrent {
				healthy++
			}
		}
		return st.AppliedRevision == rev && healthy >= objects, fmt.Sprintf("applied %q, %d healthy; %s", st.AppliedRevision, healthy, e2etest.DescribeStatus(st))
	})
	t.Logf("5,000 objects through Work CRs: applied and healthy %s after the controller started (%s waiting)", time.Since(started).Round(time.Second), took.Round(time.Second))
	list, err := m.Client().CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{LabelSelector: labelManaged + "=true"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != objects {
		t.Errorf("the member has %d managed ConfigMaps in %s, want %d", len(list.Items), ns, objects)
	}
}
