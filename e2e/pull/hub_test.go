package pull

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/propagit/propagit/internal/agent"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// workObjects returns the names of the objects in cluster's Work, as
// recorded in store.
func workObjects(store agent.Source, cluster string) ([]string, error) {
	ctx, cancel := kubeCtx()
	defer cancel()
	w, err := store.ListCluster(ctx, cluster)
	if err != nil || w == nil {
		return nil, err
	}
	objs, err := workv1alpha1.Objects(w)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetKind()+"/"+o.GetName())
	}
	slices.Sort(names)
	return names, nil
}

// clusterReady returns the status (True, False, Unknown) whose
// propagit_cluster_ready_condition series is 1 for cluster, "" when none.
func clusterReady(reg *prometheus.Registry, cluster string) (string, error) {
	families, err := reg.Gather()
	if err != nil {
		return "", err
	}
	for _, f := range families {
		if f.GetName() != "propagit_cluster_ready_condition" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["cluster"] == cluster && m.GetGauge().GetValue() == 1 {
				return labels["status"], nil
			}
		}
	}
	return "", nil
}
