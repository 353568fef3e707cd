package workv1alpha1

// Annotations the controller sets on every Work: the member cluster as the
// render that produced the Work saw it, so `propagit status` shows why a
// cluster receives nothing, or lost an application, without the controller
// at hand (Karmada shows the same on the Cluster object).
const (
	// AnnotationClusterReady is the cluster's Ready condition status: True,
	// False or Unknown.
	AnnotationClusterReady = "propagit.io/cluster-ready"
	// AnnotationClusterTaints lists the cluster's taints, comma-separated,
	// each as kubectl writes it: key[=value]:Effect.
	AnnotationClusterTaints = "propagit.io/cluster-taints"
)
