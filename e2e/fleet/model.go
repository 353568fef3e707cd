// Package fleet generates the benchmark fleets of issues #3 and #18
// deterministically: a propagit repository of resource templates,
// label-selector PropagationPolicies, per-region OverridePolicies and
// Clusters in four regions, and the same scenario written as per-cluster
// kustomize overlays, the way teams do without propagit. Both are written
// from one Model, and Model.Check verifies what a cluster received against
// it, so a broken generator or a broken render fails instead of
// benchmarking nothing. e2e/tools/fleetgen writes a fleet to disk.
package fleet

import (
	"fmt"
)

// Sizes of the scenario besides the templates and clusters: ten consecutive
// templates share an app-group, twenty templates per group.
const (
	templatesPerGroup = 20
	namespaceCount    = 10
	regionCount       = 4

	// OwnerLabel, WindowAnnotation and WindowValue are what the overrides
	// write.
	OwnerLabel       = "app.example.com/owner"
	WindowAnnotation = "ops.example.com/maintenance-window"
	WindowValue      = "sat-02:00-04:00"
)

// placements is the placement of group g, by g%5: mostly Duplicated, one
// group in five Divided by static weights inside its home region.
var placements = []string{"all", "region", "two-regions", "not-region", "divided"}

// Template is one generated resource template. Deployments are i%10 in
// 0..3, Services 4..6, ConfigMaps 7..9; ten consecutive indexes share a group.
type Template struct {
	Index, GroupIndex                         int
	Kind, Name, Namespace, Group, Peer, Image string
	Replicas                                  int64
}

// Group is one app-group: its PropagationPolicy and OverridePolicy.
type Group struct {
	Index, home                                      int
	Name, Namespace, Placement, Home, Next, Excluded string
	ImageRegion, AnnotationRegion                    string
}

// Cluster is one member cluster.
type Cluster struct{ Name, Region, Tier, SyncMode string }

// Model is the scenario both repositories are written from.
type Model struct {
	Templates []Template
	Groups    []Group
	Clusters  []Cluster
	byName    map[string]*Template
	// objects is, per cluster index, how many objects it must receive.
	objects []int
}

func templateName(i int) string { return fmt.Sprintf("app-%04d", i) }
func region(r int) string       { return fmt.Sprintf("r%d", r%regionCount) }
func clusterRegion(c int) int   { return c % regionCount }

// weight is the static weight of cluster c: 2 for tier large, else 1.
func weight(c int) int64 {
	if c%3 == 0 {
		return 2
	}
	return 1
}

// New returns the model of templates templates on clusters clusters
// (templates a multiple of 20, clusters of 4, so every group and region is
// full).
func New(templates, clusters int) (*Model, error) {
	if templates <= 0 || templates%templatesPerGroup != 0 || clusters <= 0 || clusters%regionCount != 0 {
		return nil, fmt.Errorf("fleet of %d templates on %d clusters: want a positive multiple of %d templates and of %d clusters",
			templates, clusters, templatesPerGroup, regionCount)
	}
	m := &Model{byName: map[string]*Template{}, objects: make([]int, clusters)}
	for g := range templates / templatesPerGroup {
		h := g % regionCount
		m.Groups = append(m.Groups, Group{Index: g, home: h, Name: fmt.Sprintf("g%d", g),
			Namespace: fmt.Sprintf("team-%d", g%namespaceCount), Placement: placements[g%5],
			Home: region(h), Next: region(h + 1), Excluded: region(h + 3),
			ImageRegion: region(h), AnnotationRegion: region(h + 1)})
	}
	for c := range clusters {
		cl := Cluster{Name: ClusterName(c), Region: region(c), Tier: "small", SyncMode: "Push"}
		if weight(c) == 2 {
			cl.Tier = "large"
		}
		if c%2 == 1 {
			cl.SyncMode = "Pull"
		}
		m.Clusters = append(m.Clusters, cl)
	}
	for i := range templates {
		m.Templates = append(m.Templates, m.newTemplate(i))
	}
	for i := range m.Templates {
		t := &m.Templates[i]
		m.byName[t.Name] = t
		for c := range clusters {
			if m.Groups[t.GroupIndex].places(c) {
				m.objects[c]++
			}
		}
	}
	return m, nil
}

// ClusterName is the name of cluster c.
func ClusterName(c int) string { return fmt.Sprintf("member-%03d", c) }

// Objects is how many objects the whole fleet renders to.
func (m *Model) Objects() int {
	n := 0
	for _, o := range m.objects {
		n += o
	}
	return n
}

// regionWeight sums the weights of region r. A Divided Deployment asks for
// k times this, so Webster gives every cluster exactly k times its weight.
func (m *Model) regionWeight(r int) int64 {
	var w int64
	for c := range len(m.objects) {
		if clusterRegion(c) == r {
			w += weight(c)
		}
	}
	return w
}

func (m *Model) newTemplate(i int) Template {
	g := m.Groups[(i/10)%len(m.Groups)]
	t := Template{Index: i, GroupIndex: g.Index, Name: templateName(i), Namespace: g.Namespace, Group: g.Name}
	d := i % 10
	switch {
	case d < 4:
		t.Kind, t.Peer = "Deployment", templateName(i-d+7+d%3)
		t.Image = fmt.Sprintf("registry.example.com/%s/%s:v1.%d.0", t.Namespace, t.Name, i%7)
		t.Replicas = int64(2 + i%3)
		if g.Placement == "divided" {
			t.Replicas = int64(1+i%2) * m.regionWeight(g.home)
		}
	case d < 7:
		t.Kind, t.Peer = "Service", templateName(i-4)
	default:
		t.Kind, t.Peer = "ConfigMap", templateName(i-7)
	}
	return t
}

// places reports whether the group's policy selects cluster c.
func (g Group) places(c int) bool {
	r := clusterRegion(c)
	switch g.Placement {
	case "region", "divided":
		return r == g.home
	case "two-regions":
		return r == g.home || r == (g.home+1)%regionCount
	case "not-region":
		return r != (g.home+3)%regionCount
	}
	return true
}

// want is what cluster c must hold for one template after the three
// override rules: owner labels everywhere, the registry swapped in the home
// region, the maintenance annotation in the next region.
type want struct {
	replicas  int64
	image     string
	annotated bool
}

func (m *Model) want(t *Template, c int) want {
	g := m.Groups[t.GroupIndex]
	w := want{replicas: t.Replicas, image: t.Image, annotated: region(c) == g.AnnotationRegion}
	if g.Placement == "divided" {
		w.replicas = int64(1+t.Index%2) * weight(c)
	}
	if t.Kind == "Deployment" && region(c) == g.ImageRegion {
		w.image = "registry-" + g.ImageRegion + ".example.com" + t.Image[len("registry.example.com"):]
	}
	return w
}
