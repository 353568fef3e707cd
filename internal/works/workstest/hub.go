package workstest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/testenv"
)

// The hub is a real apiserver with the Work CRD, started by the first test
// of a package that needs it and stopped by Run once every test ran. Git
// tests never start it.
var hubState struct {
	once sync.Once
	env  *testenv.Env
	c    client.Client
	err  error
}

// Run runs the tests of m and stops the hub if one started: call it from
// TestMain, and exit with its code.
func Run(m *testing.M) int {
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	if hubState.env != nil {
		if err := hubState.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "failed to stop the hub: %v\n", err)
			code = 1
		}
	}
	return code
}

// Hub returns a client of the hub apiserver, which serves the Work CRD.
func Hub(t testing.TB) client.Client {
	t.Helper()
	hubState.once.Do(func() {
		hubState.env, hubState.err = testenv.New(testenv.Options{Members: 1})
		if hubState.err == nil {
			hubState.c, hubState.err = installCRD(hubState.env.Members[0])
		}
	})
	if hubState.err != nil {
		t.Fatalf("failed to start the hub: %v", hubState.err)
	}
	return hubState.c
}

// installCRD creates the Work CRD from deploy/crds, waits until it is
// served, and returns a client whose scheme knows Works.
func installCRD(m *testenv.Member) (client.Client, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{apiextensionsv1.AddToScheme, corev1.AddToScheme, coordinationv1.AddToScheme, workv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	_, here, _, _ := goruntime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "..", "deploy", "crds", "propagit.io_works.yaml"))
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, err
	}
	c, err := client.New(m.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Create(ctx, crd); err != nil {
		return nil, err
	}
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return nil, err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				// A new client discovers the new group, once discovery lists it.
				if err := testenv.WaitServed(ctx, m.Config, workv1alpha1.GroupVersion, "works"); err != nil {
					return nil, err
				}
				return client.New(m.Config, client.Options{Scheme: scheme})
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the Work CRD was not established: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

var nsCounter atomic.Int64

// HubConfig is the hub's rest.Config, for a client of its own (an agent's
// rate limit); Hub must have been called.
func HubConfig() *rest.Config { return hubState.env.Members[0].Config }

// HubNamespace creates a namespace no other test uses.
func HubNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{}
	ns.Name = fmt.Sprintf("works-%d-%d", time.Now().Unix()%100000, nsCounter.Add(1))
	if err := c.Create(Ctx(t), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}
