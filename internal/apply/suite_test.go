package apply

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/propagit/propagit/internal/testenv"
)

// member is the one member cluster every test and benchmark in this package
// applies to; each test works in namespaces of its own.
var member *testenv.Member

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	env, err := testenv.New(testenv.Options{Members: 1})
	if err != nil {
		fmt.Fprintf(os.Stderr, "failed to start the test member: %v\n", err)
		os.Exit(1)
	}
	member = env.Members[0]
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "failed to stop the test member: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
