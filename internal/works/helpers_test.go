package works_test

import (
	"os"
	"testing"

	"github.com/propagit/propagit/internal/works/gitstore"
	"github.com/propagit/propagit/internal/works/workstest"
)

func TestMain(m *testing.M) { os.Exit(workstest.Run(m)) }

// The fixtures the works stores' tests share (workstest), by the names
// the store benchmarks use.
var (
	hub         = workstest.Hub
	configMap   = workstest.ConfigMap
	newTestWork = workstest.NewWork
	testStatus  = workstest.Status
	ctxT        = workstest.Ctx
	t0          = workstest.T0
	reversed    = workstest.Reversed
)

// remote is a workstest.Remote a Git store is built on.
type remote struct{ *workstest.Remote }

func httpRemote(t testing.TB) *remote { return &remote{workstest.HTTPRemote(t)} }

// store returns a new Git store on r with mods applied to its options.
func (r *remote) store(t testing.TB, mods ...func(*gitstore.Options)) *gitstore.Store {
	t.Helper()
	opts := gitstore.Options{URL: r.URL, Auth: r.Auth}
	for _, m := range mods {
		m(&opts)
	}
	g, err := gitstore.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
