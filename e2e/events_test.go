package e2e

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/events"
	"github.com/propagit/propagit/internal/testenv"
)

// TestOpsEventsOnWorks: with Works as custom resources on a hub, what
// happens to a member is recorded as Kubernetes Events on its Work, as
// `kubectl describe work` shows them: Applied when it runs a revision
// healthy, RenderFailed (Warning) for a template that fails to render.
func TestOpsEventsOnWorks(t *testing.T) {
	t.Parallel()
	m1 := sharedMembers(t, 1)[0]
	hubMember := testenv.Start(t, testenv.Options{Members: 1}).Members[0] // its Work CRs' namespaces are named after the clusters
	hub := e2etest.StartHub(t, hubMember, converge, pollEvery)
	hubNS := randomNamespace("propagit")
	e2etest.CreateNamespace(t, hub, hubNS)
	ns := randomNamespace("events")
	remote := e2etest.HTTPRemote(t)
	co := newCheckout(t, remote)
	co.ConfigMapFleet(ns, m1.Name)
	co.Write(fleetDir+"/a.yaml", e2etest.ConfigMapYAML(ns, "a", "v1"))
	co.CommitPush("one ConfigMap")

	rec, err := events.New(hubMember.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Stop)
	s := newSetup(t, remote, m1)
	s.Hub, s.HubNamespace = hub, hubNS
	opts := controllerOptions()
	opts.Events = rec
	ctrl := startControllerOpts(t, s, opts)
	memberNS, err := workv1alpha1.MemberNamespace(m1.Name)
	if err != nil {
		t.Fatal(err)
	}
	waitEvent(t, hub, memberNS, m1.Name, corev1.EventTypeNormal, workv1alpha1.EventApplied, "applied")

	co.Write(fleetDir+"/override.yaml", overrideYAML(ns, "a", m1.Name, "/data/nope", "x"))
	rev := co.CommitPush("an override with a typo")
	ctrl.waitRevision(rev)
	waitEvent(t, hub, memberNS, m1.Name, corev1.EventTypeWarning, workv1alpha1.EventRenderFailed, "/data/nope")
}

// waitEvent waits for an Event of type and reason on cluster's Work, in
// namespace ns, whose message contains text.
func waitEvent(t *testing.T, hub client.Client, ns, cluster, eventType, reason, text string) {
	t.Helper()
	eventually(t, converge, func() (bool, string) {
		ctx, cancel := kubeCtx()
		defer cancel()
		var list corev1.EventList
		if err := hub.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == "Work" && e.InvolvedObject.Name == cluster && e.Type == eventType && e.Reason == reason &&
				strings.Contains(e.Message, text) && e.Source.Component == events.Component {
				return true, ""
			}
			seen = append(seen, e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name+" "+e.Reason+": "+e.Message)
		}
		return false, fmt.Sprintf("no %s %s Event on Work %s containing %q; events: %v", eventType, reason, cluster, text, seen)
	})
}
