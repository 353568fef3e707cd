package observe

import (
	"sync"
	"time"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
)

// probeCache holds each push member's last effective probe result, so that
// passes closer together than the probe interval (a burst of webhook
// pushes) do not probe again. A changed Cluster object is probed at once.
type probeCache struct {
	mu      sync.Mutex
	results map[string]probed
}

type probed struct {
	at              time.Time
	resourceVersion string
	status          *clusterv1alpha1.ClusterStatus
}

// recent returns cl's result when it is younger than interval.
func (p *probeCache) recent(cl *clusterv1alpha1.Cluster, now time.Time, interval time.Duration) (*clusterv1alpha1.ClusterStatus, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.results[cl.Name]
	if !ok || interval <= 0 || now.Sub(r.at) >= interval || r.resourceVersion != cl.ResourceVersion {
		return nil, false
	}
	return r.status, true
}

// forgetAllBut drops the results of members not in keep: a member removed
// and added again is probed afresh.
func (p *probeCache) forgetAllBut(keep map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for name := range p.results {
		if !keep[name] {
			delete(p.results, name)
		}
	}
}

func (p *probeCache) keep(cl *clusterv1alpha1.Cluster, st *clusterv1alpha1.ClusterStatus, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.results == nil {
		p.results = map[string]probed{}
	}
	p.results[cl.Name] = probed{at: now, resourceVersion: cl.ResourceVersion, status: st}
}
