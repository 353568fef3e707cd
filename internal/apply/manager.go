package apply

import (
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
)

// Manager applies, prunes and reads the health of propagit's objects on one
// member cluster. It is safe for concurrent use, but two Apply calls for the
// same member must not overlap: each needs the inventory the other returns.
type Manager struct {
	client client.Client
	ssa    *ssa.ResourceManager
	opts   Options
	// cfg is the member's config when the Manager was built from one.
	cfg *rest.Config
	// interp holds the ResourceInterpreterCustomizations in force (see
	// Interpret).
	interp atomic.Pointer[interpret.Interpreter]
	// keys decrypts SOPS-encrypted objects (see UseKeys).
	keys atomic.Pointer[keyring]
}

// Interpret sets the customizations in force: for the kinds they script,
// InterpretHealth judges health instead of kstatus and Retain keeps the
// member's fields before each apply, as in Karmada. Safe to call while
// the Manager works; nil removes them.
func (m *Manager) Interpret(ip *interpret.Interpreter) { m.interp.Store(ip) }

// New returns a Manager that talks to one member through c. The client's
// rate limits are used as they are; see NewForConfig.
func New(c client.Client, opts Options) (*Manager, error) {
	if c == nil {
		return nil, errors.New("failed to create apply manager: client is nil")
	}
	opts = opts.withDefaults()
	poller := polling.NewStatusPoller(c, c.RESTMapper(), polling.Options{})
	rm := ssa.NewResourceManager(c, poller, ssa.Owner{Field: opts.FieldManager, Group: workv1alpha1.GroupVersion.Group}) // ssa.Owner requires a group; propagit sets no owner labels
	rm.SetConcurrency(opts.Concurrency)
	return &Manager{client: c, ssa: rm, opts: opts}, nil
}

// NewForConfig builds a controller-runtime client for the member reached by
// cfg, with the rate limits of opts.QPS and opts.Burst, and returns a Manager
// using it. cfg is copied, not changed.
func NewForConfig(cfg *rest.Config, opts Options) (*Manager, error) {
	if cfg == nil {
		return nil, errors.New("failed to create apply manager: rest config is nil")
	}
	opts = opts.withDefaults()
	cfg = RESTConfig(cfg, opts)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create HTTP client for %s: %w", cfg.Host, err)
	}
	c, err := newClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	m, err := New(c, opts)
	if err != nil {
		return nil, err
	}
	m.cfg = cfg
	return m, nil
}

// Config returns the member's rest config (with the Manager's rate limits),
// nil when the Manager was built by New from a client.
func (m *Manager) Config() *rest.Config { return m.cfg }

// RESTMapper maps the member's kinds to resources.
func (m *Manager) RESTMapper() meta.RESTMapper { return m.client.RESTMapper() }

// FieldManager is the field manager the Manager applies as.
func (m *Manager) FieldManager() string { return m.opts.FieldManager }

// RESTConfig returns a copy of cfg with the rate limits of opts (filled from
// DefaultOptions where zero). Use it to build the client passed to New.
func RESTConfig(cfg *rest.Config, opts Options) *rest.Config {
	opts = opts.withDefaults()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = opts.QPS
	cfg.Burst = opts.Burst
	cfg.RateLimiter = nil
	return cfg
}

// newClient builds a controller-runtime client over httpClient. The default
// scheme is enough: the manager works with unstructured objects only.
func newClient(cfg *rest.Config, httpClient *http.Client) (client.Client, error) {
	c, err := client.New(cfg, client.Options{HTTPClient: httpClient})
	if err != nil {
		return nil, fmt.Errorf("failed to create client for %s: %w", cfg.Host, err)
	}
	return c, nil
}
