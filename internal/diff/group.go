package diff

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
)

// clusterGroup is clusters that see exactly the same change: the same
// objects changed in the same way, with the same diff, and the same
// replica sums. A one-line image bump on 250 clusters is one group, shown
// once.
type clusterGroup struct {
	// Cluster is the first cluster's difference; Names lists every
	// cluster of the group, in report order.
	Cluster Cluster
	Names   []string
}

// groups returns r.Clusters grouped by identical change, in the order of
// each group's first cluster.
func (r *Report) groups() []clusterGroup {
	var out []clusterGroup
	index := map[[sha256.Size]byte]int{}
	for _, c := range r.Clusters {
		key := changeKey(c)
		if i, ok := index[key]; ok {
			out[i].Names = append(out[i].Names, c.Name)
			continue
		}
		index[key] = len(out)
		out = append(out, clusterGroup{Cluster: c, Names: []string{c.Name}})
	}
	return out
}

// changeKey identifies what a cluster sees, its name aside (diff headers
// name the cluster: a/<cluster>/…).
func changeKey(c Cluster) [sha256.Size]byte {
	own := "/" + c.Name + "/"
	objs := make([]Object, len(c.Objects))
	for i, o := range c.Objects {
		o.Diff = strings.ReplaceAll(o.Diff, own, "/{cluster}/")
		objs[i] = o
	}
	c.Name, c.Objects = "", objs
	b, _ := json.Marshal(c) // plain data: cannot fail
	return sha256.Sum256(b)
}

// title names a group: its cluster, or "same change on N clusters: a, b …".
func (g clusterGroup) title(quote func(string) string) string {
	if len(g.Names) == 1 {
		return quote(g.Names[0])
	}
	return "same change on " + plural(len(g.Names), "cluster") + ": " + listNames(g.Names, maxListed, quote)
}
