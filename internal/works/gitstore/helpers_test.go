package gitstore

import (
	"testing"

	"github.com/propagit/propagit/internal/works/workstest"
)

// The fixtures the works stores' tests share (workstest), by the names
// these tests use.
var (
	obj         = workstest.Obj
	configMap   = workstest.ConfigMap
	newTestWork = workstest.NewWork
	fleet       = workstest.Fleet
	testStatus  = workstest.Status
	ctxT        = workstest.Ctx
	decoded     = workstest.Decoded
	reversed    = workstest.Reversed
	t0          = workstest.T0
)

const worksBranch = workstest.WorksBranch

// remote is a workstest.Remote a Store is built on.
type remote struct{ *workstest.Remote }

func fileRemote(t testing.TB) *remote { return &remote{workstest.FileRemote(t)} }

func httpRemote(t testing.TB) *remote { return &remote{workstest.HTTPRemote(t)} }

// eachRemote runs f against a file:// and a smart-HTTP remote.
func eachRemote(t *testing.T, f func(t *testing.T, r *remote)) {
	workstest.EachRemote(t, func(t *testing.T, r *workstest.Remote) { f(t, &remote{r}) })
}

// store returns a new Store on r with mods applied to its options.
func (r *remote) store(t testing.TB, mods ...func(*Options)) *Store {
	t.Helper()
	opts := Options{URL: r.URL}
	if r.Auth != nil {
		opts.Auth = r.Auth
	}
	for _, m := range mods {
		m(&opts)
	}
	g, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGitStoreRecordsAnnotations(t *testing.T) {
	workstest.CheckAnnotationSteps(t, fileRemote(t).store(t))
}

func TestGitStoreRecorderHeartbeat(t *testing.T) {
	workstest.CheckRecorderHeartbeat(t, fileRemote(t).store(t))
}

func TestRolloutStatesGitStore(t *testing.T) {
	workstest.CheckRolloutStates(t, fileRemote(t).store(t))
}
