package incremental

import (
	"crypto/sha256"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// effectiveClusters is render.EffectiveClusters through the memo: while the
// declared clusters and the taint policies are the very lists of the last
// Render (a load.Cache hands them out again while unchanged) and each
// cluster's live status is the very object, the clusters are the last
// Render's, and so are their digests. The clusters are read-only.
func (m *Memo) effectiveClusters(in render.Input) []*clusterv1alpha1.Cluster {
	e := &m.effective
	same := e.clusters != nil && sameList(in.Set.Clusters, e.declared) && sameList(in.Set.TaintPolicies, e.taints) && len(e.status) == len(e.clusters)
	for i := 0; same && i < len(e.clusters); i++ {
		same = in.Status[e.clusters[i].Name] == e.status[i]
	}
	if same {
		return e.clusters
	}
	clusters := render.EffectiveClusters(in.Set, in.Status)
	status := make([]*clusterv1alpha1.ClusterStatus, len(clusters))
	for i, c := range clusters {
		status[i] = in.Status[c.Name]
	}
	*e = effectiveMemo{declared: in.Set.Clusters, taints: in.Set.TaintPolicies, status: status, clusters: clusters}
	return clusters
}

// effectiveMemo is what the last effective clusters were made of.
type effectiveMemo struct {
	declared []load.Cluster
	taints   []load.TaintPolicy
	status   []*clusterv1alpha1.ClusterStatus // by cluster, as given
	clusters []*clusterv1alpha1.Cluster
}

// sameList reports whether a and b are the very same list.
func sameList[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// clusterDigests remembers the digests of each effective cluster by what it
// is made of: the declared Cluster (read-only, the same object from one
// load.Cache Load to the next while its file is unchanged), the live status
// given for it (a new object whenever the caller observes again) and the
// taint policies. A revision that changes no cluster then encodes none.
// Not safe for concurrent use.
type clusterDigests struct {
	prev map[string]clusterDigest
	// last are the clusters digested last, and full and uncounted their
	// digests: the very same clusters (Memo.effectiveClusters) need no look.
	last            []*clusterv1alpha1.Cluster
	full, uncounted [sha256.Size]byte
}

type clusterDigest struct {
	declared *clusterv1alpha1.Cluster
	status   *clusterv1alpha1.ClusterStatus
	taints   [sha256.Size]byte
	// full covers all the effective cluster (what filters and the
	// estimator read); uncounted leaves out its resourceSummary.
	full, uncounted [sha256.Size]byte
}

// of returns the digests of clusters, the effective clusters of set under
// status, all of them (full) and without their capacity (uncounted); false
// when one cannot be encoded.
func (d *clusterDigests) of(set *load.Set, status map[string]*clusterv1alpha1.ClusterStatus, clusters []*clusterv1alpha1.Cluster,
	taints [sha256.Size]byte) (full, uncounted [sha256.Size]byte, ok bool) {
	if d.last != nil && sameList(clusters, d.last) {
		return d.full, d.uncounted, true
	}
	d.last = nil
	defer func() {
		if ok {
			d.last, d.full, d.uncounted = clusters, full, uncounted
		}
	}()
	declared := make(map[string]*clusterv1alpha1.Cluster, len(set.Clusters))
	for _, c := range set.Clusters {
		declared[c.Cluster.Name] = c.Cluster
	}
	remember := len(declared) == len(set.Clusters) // names are unique (load checks): else only the digests below count
	cur := make(map[string]clusterDigest, len(clusters))
	all, allUncounted := sha256.New(), sha256.New()
	for _, c := range clusters {
		key := clusterDigest{declared: declared[c.Name], status: status[c.Name], taints: taints}
		e, hit := d.prev[c.Name]
		if !hit || !remember || e.declared != key.declared || e.status != key.status || e.taints != key.taints {
			e = key
			var fullOK, uncountedOK bool
			e.full, fullOK = digestOf(c)
			e.uncounted, uncountedOK = digestOf(withoutCapacity(c))
			if !fullOK || !uncountedOK {
				d.prev = nil
				return full, uncounted, false
			}
		}
		cur[c.Name] = e
		all.Write(e.full[:])
		allUncounted.Write(e.uncounted[:])
	}
	if remember {
		d.prev = cur
	} else {
		d.prev = nil
	}
	all.Sum(full[:0])
	allUncounted.Sum(uncounted[:0])
	return full, uncounted, true
}

// withoutCapacity returns a copy of c without its resourceSummary.
func withoutCapacity(c *clusterv1alpha1.Cluster) *clusterv1alpha1.Cluster {
	cp := *c
	if c.Status != nil {
		st := *c.Status
		st.ResourceSummary = nil
		cp.Status = &st
	}
	return &cp
}
