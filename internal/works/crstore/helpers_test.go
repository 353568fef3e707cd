package crstore

import (
	"os"
	"testing"

	"github.com/propagit/propagit/internal/works/workstest"
)

func TestMain(m *testing.M) { os.Exit(workstest.Run(m)) }

// The fixtures the works stores' tests share (workstest), by the names
// these tests use.
var (
	hub          = workstest.Hub
	hubNamespace = workstest.HubNamespace
	configMap    = workstest.ConfigMap
	newTestWork  = workstest.NewWork
	fleet        = workstest.Fleet
	testStatus   = workstest.Status
	ctxT         = workstest.Ctx
	decoded      = workstest.Decoded
	reversed     = workstest.Reversed
	t0           = workstest.T0
)
