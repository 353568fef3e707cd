package restrict

import "slices"

// namespacedKinds are the built-in kinds that live in a namespace. Any
// other kind, a custom resource propagit does not know included, is judged
// as cluster-scoped even when it carries a namespace: a committer cannot
// slip a cluster-scoped kind past ClusterScopedKinds by giving it one (the
// apiserver would ignore it). Policy.NamespacedKinds adds custom kinds.
var namespacedKinds = map[string]bool{
	"Pod": true, "PodTemplate": true, "ReplicationController": true, "Service": true, "Endpoints": true,
	"ConfigMap": true, "Secret": true, "ServiceAccount": true, "PersistentVolumeClaim": true,
	"LimitRange": true, "ResourceQuota": true, "Event": true, "Binding": true,
	"Deployment.apps": true, "StatefulSet.apps": true, "DaemonSet.apps": true, "ReplicaSet.apps": true,
	"ControllerRevision.apps": true, "Job.batch": true, "CronJob.batch": true,
	"HorizontalPodAutoscaler.autoscaling": true, "PodDisruptionBudget.policy": true,
	"NetworkPolicy.networking.k8s.io": true, "Ingress.networking.k8s.io": true,
	"Role.rbac.authorization.k8s.io": true, "RoleBinding.rbac.authorization.k8s.io": true,
	"Lease.coordination.k8s.io": true, "EndpointSlice.discovery.k8s.io": true, "Event.events.k8s.io": true,
	"CSIStorageCapacity.storage.k8s.io": true, "ResourceClaim.resource.k8s.io": true,
	"ResourceClaimTemplate.resource.k8s.io": true, "LocalSubjectAccessReview.authorization.k8s.io": true,
	// Common custom resources, among them those of DefaultPodSpecPaths.
	"Rollout.argoproj.io": true, "Service.serving.knative.dev": true, "Configuration.serving.knative.dev": true,
	"Revision.serving.knative.dev": true, "Route.serving.knative.dev": true, "CloneSet.apps.kruise.io": true,
	"StatefulSet.apps.kruise.io": true, "DaemonSet.apps.kruise.io": true, "ScaledJob.keda.sh": true,
	"ScaledObject.keda.sh": true, "JobSet.jobset.x-k8s.io": true,
	"Gateway.gateway.networking.k8s.io": true, "HTTPRoute.gateway.networking.k8s.io": true,
	"GRPCRoute.gateway.networking.k8s.io": true, "ReferenceGrant.gateway.networking.k8s.io": true,
	"Certificate.cert-manager.io": true, "Issuer.cert-manager.io": true,
	"ServiceMonitor.monitoring.coreos.com": true, "PodMonitor.monitoring.coreos.com": true,
	"PrometheusRule.monitoring.coreos.com": true,
}

// namespaced reports whether gk is a kind that lives in a namespace.
func (p *Policy) namespaced(gk string) bool {
	return namespacedKinds[gk] || slices.Contains(p.NamespacedKinds, gk)
}
