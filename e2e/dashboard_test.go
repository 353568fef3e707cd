package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/dashboard"
	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/testenv"
	"github.com/propagit/propagit/internal/works/crstore"
	"github.com/propagit/propagit/internal/works/gitstore"
)

// chromiumPath is Debian's chromium, which `make test-assets` installs.
const chromiumPath = "/usr/bin/chromium"

// dashboardShotsEnv names a folder the screenshots are also copied to
// (docs/dashboard to refresh the README's images).
const dashboardShotsEnv = "PROPAGIT_DASHBOARD_SHOTS"

// dashSecret is a Secret of the quickstart fleet whose value must never
// reach a page.
const (
	dashSecretName  = "nginx-auth"
	dashSecretValue = "hunter2-never-shown"
)

// TestDashboardBrowser runs the controller on two members with a real Git
// remote, serves the dashboard from the Git store and drives it in
// headless Chromium: the fleet page lists both members Ready on the pushed
// revision; a new commit turns healthy on the revisions page without a
// reload; a Service deleted on a member shows as drift on the events page;
// the Secret's template page shows the explain trace and a redacted value;
// a member whose apiserver is killed turns Unknown. Each page is captured
// at 1280×800 under the test's temp dir.
func TestDashboardBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("%s: %v (make test-assets installs it)", chromiumPath, err)
	}
	env := testenv.Start(t, testenv.Options{Members: 2, Workloads: true})
	m1, m2 := env.Members[0], env.Members[1]
	remote := e2etest.HTTPRemote(t)
	co := newCheckout(t, remote)
	rev1 := pushDashboardFleet(co)
	opts := controllerOptions()
	opts.ClusterFailureThreshold, opts.ClusterSuccessThreshold = 2*time.Second, 2*time.Second
	opts.ProbeTimeout = 2 * time.Second
	startControllerOpts(t, newSetup(t, remote, m1, m2), opts)
	store, err := gitstore.New(gitstore.Options{URL: remote.URL, Auth: remote.Auth})
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, serveDashboard(t, store, store, remote))

	// Fleet: both members Ready on rev1 (the page may load before they are:
	// it updates in place).
	b.open("/")
	b.waitText(`tr[data-member="member1"] [data-state]`, "Ready")
	b.waitText(`tr[data-member="member2"] [data-state]`, "Ready")
	b.waitContains("#fleet", workv1alpha1.ShortRevision(rev1))
	b.shot("fleet")
	b.checkKeyboardAndDark()

	// Revisions: a new commit appears and turns healthy on both members
	// while the page stays loaded.
	b.open("/revisions")
	b.mark()
	co.Edit(qsDeploy, "replicas: 2", "replicas: 3")
	rev2, pushed := co.CommitPush("nginx: 3 replicas"), time.Now()
	b.waitText(fmt.Sprintf(`tr[data-revision=%q] td[data-col="healthy"]`, rev2), "2")
	t.Logf("timing: commit %s shown healthy on both members %s after the push, without a reload",
		e2etest.Short(rev2), time.Since(pushed).Round(100*time.Millisecond))
	b.checkMarked()
	b.shot("revisions")
	b.open("/revision?rev=" + rev2)
	b.waitText(`tr[data-member="member1"] [data-state]`, "Healthy")
	b.waitText(`tr[data-member="member2"] [data-state]`, "Healthy")
	b.shot("revision")

	// Events: a Service deleted by hand on member1 is recreated and shows.
	ctx, cancel := kubeCtx()
	defer cancel()
	if err := m1.Client().CoreV1().Services(qsNamespace).Delete(ctx, qsApp, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.open("/events")
	b.waitContains(`#events tbody`, "Service.core/"+qsNamespace+"/"+qsApp)
	b.waitContains(`#events tbody`, string(workv1alpha1.DriftRecreated))
	b.shot("events")

	// Templates, then the Secret's page: the trace and no value.
	b.open("/templates")
	b.waitContains("#templates", "Secret.core/"+qsNamespace+"/"+dashSecretName)
	b.shot("templates")
	b.open("/template?name=" + url.QueryEscape("Deployment.apps/"+qsNamespace+"/"+qsApp))
	b.waitContains("#explain-trace", "nginx-propagation")
	b.waitContains("#explain-trace", "nginx-override")
	b.shot("template")
	b.open("/template?name=" + url.QueryEscape("Secret.core/"+qsNamespace+"/"+dashSecretName))
	b.waitContains("#explain-trace", "nginx-propagation")
	b.waitContains(`pre[data-member="member1"]`, "password: "+dashboard.Redacted)
	if html := b.html(); strings.Contains(html, dashSecretValue) || strings.Contains(html, "aHVudGVyMi1uZXZlci1zaG93bg") {
		t.Error("the Secret's value is on the page")
	}

	// A member whose apiserver dies turns Unknown on the fleet page.
	b.open("/")
	b.mark()
	if err := m2.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	b.waitText(`tr[data-member="member2"] [data-state]`, "Unknown")
	t.Logf("timing: member2 apiserver killed → Unknown on the page in %s", time.Since(killed).Round(100*time.Millisecond))
	b.checkMarked()
	b.shot("fleet-unknown")
}

// TestDashboardCRStore serves the dashboard from Work custom resources on
// a real hub, written by the controller for two real members: the fleet
// page lists both on the pushed revision with their clusters Ready, the
// revisions page counts the commit applied on both, and a template page
// carries its explain trace with the policy and the override.
func TestDashboardCRStore(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Members: 3})
	members, hubMember := env.Members[:2], env.Members[2]
	hub := e2etest.StartHub(t, hubMember, converge, pollEvery)
	hubNS := randomNamespace("propagit")
	e2etest.CreateNamespace(t, hub, hubNS)
	e2etest.CreateNamespace(t, hub, quickstartSecretNamespace)
	for _, m := range members {
		putMemberSecret(t, hub, quickstartSecretNamespace, m.Name, m)
	}
	remote := e2etest.HTTPRemote(t)
	co := newCheckout(t, remote)
	co.CopyDir(quickstartDir, fleetDir)
	for _, m := range members {
		co.Edit(fleetDir+"/clusters/"+m.Name+".yaml", "https://"+m.Name+".clusters.example.internal:6443", m.Config.Host)
	}
	rev := co.CommitPush("quickstart")
	s := newSetup(t, remote)
	s.KubeconfigDir = ""
	s.Hub, s.HubNamespace = hub, hubNS
	startController(t, s)
	cr := crstore.New(hub, hubNS)
	base := serveDashboard(t, cr, cr, remote)
	page := func(path string) string {
		res, err := http.Get(base + path)
		if err != nil {
			return err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	row := func(body, attr string) string {
		i := strings.Index(body, attr)
		if i < 0 {
			return ""
		}
		body = body[i:]
		return body[:max(0, strings.Index(body, "</tr>"))]
	}
	eventually(t, converge, func() (bool, string) {
		body := page("/")
		for _, m := range members {
			r := row(body, `data-member="`+m.Name+`"`)
			if !strings.Contains(r, "cluster True") || !strings.Contains(r, workv1alpha1.ShortRevision(rev)+"</code>") {
				return false, fmt.Sprintf("%s: row %q", m.Name, r)
			}
		}
		return true, ""
	})
	eventually(t, converge, func() (bool, string) {
		r := row(page("/revisions"), `data-revision="`+rev+`"`)
		return strings.Contains(r, `data-col="applied">2<`), fmt.Sprintf("revision row %q", r)
	})
	body := page("/template?name=" + url.QueryEscape("Deployment.apps/"+qsNamespace+"/"+qsApp))
	for _, want := range []string{"PropagationPolicy.policy.karmada.io/demo/nginx-propagation", "OverridePolicy.policy.karmada.io/demo/nginx-override"} {
		if !strings.Contains(body, want) {
			t.Errorf("the template page lacks %q", want)
		}
	}
}

// pushDashboardFleet pushes the quickstart with a Secret the policy also
// propagates, and returns the commit.
func pushDashboardFleet(co *e2etest.Checkout) string {
	co.CopyDir(quickstartDir, fleetDir)
	co.Write(fleetDir+"/apps/nginx/secret.yaml", fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: %s
  namespace: %s
stringData:
  password: %s
`, dashSecretName, qsNamespace, dashSecretValue))
	co.Edit(qsPolicy, "    kind: Service\n    name: nginx\n", "    kind: Service\n    name: nginx\n  - apiVersion: v1\n    kind: Secret\n    name: "+dashSecretName+"\n")
	rev := co.CommitPush("quickstart with a Secret")
	return rev
}

// serveDashboard serves the dashboard over the stores (its own instances,
// as `propagit dashboard` has) and a source follower of remote, on a
// loopback port until the test ends, and returns its base URL.
func serveDashboard(t *testing.T, ws dashboard.WorkReader, ss dashboard.StatusReader, remote *e2etest.Remote) string {
	t.Helper()
	opts := dashboard.DefaultOptions()
	opts.Works, opts.Status, opts.RepoURL = ws, ss, remote.URL
	opts.Source = dashboard.NewGitSource(source.NewFollower(source.FollowOptions{URL: remote.URL, Auth: remote.Auth, Branch: branch, Path: fleetDir}))
	opts.Refresh = 500 * time.Millisecond
	d, err := dashboard.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: d, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("dashboard server: %v", err)
		}
	}()
	t.Cleanup(func() { _ = srv.Close() })
	e2etest.StartLoop(t, "dashboard", e2etest.StopTimeout, d.Run)
	return "http://" + ln.Addr().String()
}

// fleetRecords are fabricated records of a large fleet, read through the
// interfaces the dashboard reads a store by.
type fleetRecords struct {
	works  []*workv1alpha1.Work
	status map[string]*workv1alpha1.WorkStatus
	newest string
}

func (f *fleetRecords) List(context.Context) ([]*workv1alpha1.Work, error) { return f.works, nil }

func (f *fleetRecords) NewestRevision(context.Context) (string, error) { return f.newest, nil }

func (f *fleetRecords) GetStatus(_ context.Context, cluster string) (*workv1alpha1.WorkStatus, error) {
	return f.status[cluster], nil
}

// largeFleet fabricates members Works, each running perMember of the
// templates (each template on members*perMember/templates members), all
// applied and healthy.
func largeFleet(t *testing.T, members, templates, perMember int) *fleetRecords {
	t.Helper()
	rev := strings.Repeat("a", 40)
	f := &fleetRecords{status: map[string]*workv1alpha1.WorkStatus{}, newest: rev}
	now := metav1.Now()
	for m := range members {
		name := fmt.Sprintf("member-%04d", m)
		w := &workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{Cluster: name, SourceRevision: rev}}
		st := &workv1alpha1.WorkStatus{AppliedRevision: rev, Heartbeat: &now,
			Conditions: []metav1.Condition{{Type: workv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonReady, LastTransitionTime: now}}}
		for k := range perMember {
			i := (m*perMember + k) % templates
			ns, app := fmt.Sprintf("team-%d", i%50), fmt.Sprintf("app-%05d", i)
			raw := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":%q,"annotations":{%q:%q,%q:"2"}},"spec":{"replicas":2}}`,
				app, ns, workv1alpha1.AnnotationTemplate, "Deployment.apps/"+ns+"/"+app, workv1alpha1.AnnotationScheduledReplicas)
			w.Spec.Manifests = append(w.Spec.Manifests, runtime.RawExtension{Raw: []byte(raw)})
			st.Objects = append(st.Objects, workv1alpha1.ObjectResult{ObjectRef: workv1alpha1.ObjectRef{ObjectKey: workv1alpha1.ObjectKey{
				Group: "apps", Kind: "Deployment", Namespace: ns, Name: app}}, Action: workv1alpha1.ActionUnchanged, Health: workv1alpha1.HealthCurrent})
		}
		f.works = append(f.works, w)
		f.status[name] = st
	}
	return f
}

// pageTiming is what the browser measured of one page load.
type pageTiming struct {
	// FCP and DOMContentLoaded are milliseconds from the navigation.
	FCP, DOMContentLoaded float64
	Bytes                 int64
	Rows                  int
}

// TestDashboardBrowserLargeFleet measures, in headless Chromium, the fleet
// and templates pages of 1,000 members × 10,000 templates (100 objects a
// member) of recorded status: the time to the first contentful paint and
// the bytes transferred. No members run: the records are fabricated.
func TestDashboardBrowserLargeFleet(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("%s: %v (make test-assets installs it)", chromiumPath, err)
	}
	records := largeFleet(t, 1000, 10000, 100)
	opts := dashboard.DefaultOptions()
	opts.Works, opts.Status = records, records
	d, err := dashboard.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if err := d.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("timing: first read and fold of 1,000 members × 10,000 templates %s", time.Since(started).Round(time.Millisecond))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: d, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	b := newBrowser(t, "http://"+ln.Addr().String())
	for _, path := range []string{"/", "/templates"} {
		b.open(path)
		b.waitFor("main h1", "the heading", func(string) bool { return true })
		var m pageTiming
		eventually(t, converge, func() (bool, string) {
			m, err = evaluate[pageTiming](b, `(() => { const n = performance.getEntriesByType("navigation")[0]; const p = performance.getEntriesByName("first-contentful-paint")[0];
				return {FCP: p ? p.startTime : 0, DOMContentLoaded: n.domContentLoadedEventEnd, Bytes: n.transferSize, Rows: document.querySelectorAll("main tbody tr").length} })()`)
			return err == nil && m.FCP > 0, fmt.Sprintf("no paint yet: %v", err)
		})
		t.Logf("timing: %s of 1,000 members × 10,000 templates: first contentful paint %.0f ms, DOMContentLoaded %.0f ms, %d bytes, %d rows",
			path, m.FCP, m.DOMContentLoaded, m.Bytes, m.Rows)
		if m.Rows != 100 {
			t.Errorf("%s: %d rows, want one page of 100", path, m.Rows)
		}
		if m.FCP > 5000 {
			t.Errorf("%s: first contentful paint after %.0f ms, want under 5 s", path, m.FCP)
		}
	}
}
