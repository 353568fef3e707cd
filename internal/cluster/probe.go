package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/podrequests"
)

// Probe reads the live state of one member: Ready from /readyz, the
// Kubernetes version and served APIs from discovery, and the capacity
// Karmada's general estimator reads — node allocatable, minus the requests
// of pods that are not finished.
func Probe(ctx context.Context, cfg *rest.Config, now time.Time) *clusterv1alpha1.ClusterStatus {
	st := &clusterv1alpha1.ClusterStatus{}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		setReady(st, metav1.ConditionFalse, workv1alpha1.ReasonClientError, err.Error(), now)
		return st
	}
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Raw()
	if err != nil {
		setReady(st, metav1.ConditionUnknown, workv1alpha1.ReasonClusterUnreachable, fmt.Sprintf("readyz failed: %v", err), now)
		return st
	}
	if string(body) != "ok" {
		setReady(st, metav1.ConditionFalse, workv1alpha1.ReasonClusterNotReady, "readyz: "+string(body), now)
		return st
	}
	setReady(st, metav1.ConditionTrue, workv1alpha1.ReasonClusterReady, "cluster is healthy and ready to accept workloads", now)
	if v, err := cs.Discovery().ServerVersion(); err == nil {
		st.KubernetesVersion = v.GitVersion
	}
	st.APIEnablements = apiEnablements(cs.Discovery())
	st.NodeSummary, st.ResourceSummary = capacity(ctx, cs)
	return st
}

func setReady(st *clusterv1alpha1.ClusterStatus, status metav1.ConditionStatus, reason, msg string, now time.Time) {
	st.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ConditionReady, Status: status, Reason: reason,
		Message: msg, LastTransitionTime: metav1.NewTime(now)}}
}

// apiEnablements lists every served groupVersion and its kinds, sorted.
func apiEnablements(d discovery.DiscoveryInterface) []clusterv1alpha1.APIEnablement {
	_, lists, _ := d.ServerGroupsAndResources() // partial results are still useful
	var out []clusterv1alpha1.APIEnablement
	for _, l := range lists {
		e := clusterv1alpha1.APIEnablement{GroupVersion: l.GroupVersion}
		for _, r := range l.APIResources {
			if !slices.ContainsFunc(e.Resources, func(x clusterv1alpha1.APIResource) bool { return x.Kind == r.Kind }) && !containsSlash(r.Name) {
				e.Resources = append(e.Resources, clusterv1alpha1.APIResource{Name: r.Name, Kind: r.Kind})
			}
		}
		slices.SortFunc(e.Resources, func(a, b clusterv1alpha1.APIResource) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b clusterv1alpha1.APIEnablement) int { return strings.Compare(a.GroupVersion, b.GroupVersion) })
	return out
}

func containsSlash(s string) bool { return slices.Contains([]byte(s), '/') }

// capacity sums node allocatable and the requests of running pods.
func capacity(ctx context.Context, cs kubernetes.Interface) (*clusterv1alpha1.NodeSummary, *clusterv1alpha1.ResourceSummary) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil
	}
	ns := &clusterv1alpha1.NodeSummary{TotalNum: int32(len(nodes.Items))}
	rs := &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{}, Allocated: corev1.ResourceList{}}
	for _, n := range nodes.Items {
		if nodeReady(&n) {
			ns.ReadyNum++
			add(rs.Allocatable, n.Status.Allocatable)
		}
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		return ns, rs
	}
	podCount := resource.NewQuantity(int64(len(pods.Items)), resource.DecimalSI)
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			add(rs.Allocated, podrequests.Of(&p.Spec))
		}
	}
	rs.Allocated[corev1.ResourcePods] = *podCount
	return ns, rs
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func add(dst, src corev1.ResourceList) {
	for name, q := range src {
		cur := dst[name]
		cur.Add(q)
		dst[name] = cur
	}
}
