package diff

import "slices"

// only restricts r to the clusters named, after moves and deletions were
// worked out over every cluster. unchanged is the count of named clusters
// that receive objects and see no difference.
func (r *Report) only(names []string, unchanged int) {
	keep := func(c string) bool { return slices.Contains(names, c) }
	drop := func(c string) bool { return !keep(c) }
	r.Clusters = slices.DeleteFunc(r.Clusters, func(c Cluster) bool { return drop(c.Name) })
	r.UnchangedClusters = unchanged
	r.Moves = slices.DeleteFunc(r.Moves, func(m Move) bool { return drop(m.From) && drop(m.To) })
	for i := range r.Deletions {
		r.Deletions[i].Clusters = slices.DeleteFunc(r.Deletions[i].Clusters, drop)
	}
	r.Deletions = slices.DeleteFunc(r.Deletions, func(d Deletion) bool { return len(d.Clusters) == 0 })
	r.Warnings = slices.DeleteFunc(r.Warnings, func(w Warning) bool { return w.Cluster != "" && drop(w.Cluster) })
	r.RenderErrors = slices.DeleteFunc(r.RenderErrors, func(e RenderError) bool { return drop(e.Cluster) })
	for i := range r.Unclaimed {
		r.Unclaimed[i].Clusters = slices.DeleteFunc(slices.Clone(r.Unclaimed[i].Clusters), drop)
	}
	r.Unclaimed = slices.DeleteFunc(r.Unclaimed, func(u Unclaimed) bool { return len(u.Clusters) == 0 })
	r.PruneHolds = slices.DeleteFunc(r.PruneHolds, func(p PruneHold) bool { return drop(p.Cluster) })
	for i := range r.Orphaned {
		r.Orphaned[i].Clusters = slices.DeleteFunc(r.Orphaned[i].Clusters, drop)
	}
	r.Orphaned = slices.DeleteFunc(r.Orphaned, func(o Orphaned) bool { return len(o.Clusters) == 0 })
	for i := range r.Waves {
		for j := range r.Waves[i].Waves {
			r.Waves[i].Waves[j].Clusters = slices.DeleteFunc(r.Waves[i].Waves[j].Clusters, drop)
		}
		r.Waves[i].Waves = slices.DeleteFunc(r.Waves[i].Waves, func(w PlannedWave) bool { return len(w.Clusters) == 0 })
	}
	r.Waves = slices.DeleteFunc(r.Waves, func(p WavePlan) bool { return len(p.Waves) == 0 })
}

// unchanged counts the named clusters that receive objects on either side
// and have no entry in all.
func unchanged(base, head placement, all [][]*entry, names []string) int {
	changed := map[string]bool{}
	for _, entries := range all {
		if len(entries) > 0 {
			changed[entries[0].cluster] = true
		}
	}
	n := 0
	for _, name := range slices.Compact(slices.Sorted(slices.Values(names))) {
		_, inBase := base[name]
		_, inHead := head[name]
		if (inBase || inHead) && !changed[name] {
			n++
		}
	}
	return n
}
