package e2etest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// What every end-to-end package's scenarios share.
const (
	// Branch is the source branch a scenario's controller follows.
	Branch = "main"
	// FleetDir is the folder of the source repository holding the fleet.
	FleetDir = "fleet"
	// PollEvery is how often a wait re-checks its condition.
	PollEvery = 100 * time.Millisecond
	// Converge bounds a wait for a change to reach members or stores: far
	// above what a quiet machine needs, so a loaded one passes too.
	Converge = 90 * time.Second
	// StopTimeout bounds the wait for a Run loop to return once cancelled.
	StopTimeout = time.Minute
)

// KubeCtx bounds one call to a member or hub.
func KubeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// FreeAddr returns a loopback address whose port is free at the time of
// the call.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// ClusterYAML is a Cluster without status in syncMode mode (Push or Pull):
// the controller probes a push member, an agent describes a pull member.
func ClusterYAML(name, mode string) string {
	return fmt.Sprintf("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: %s\nspec:\n  syncMode: %s\n", name, mode)
}

// NamespaceYAML is a Namespace.
func NamespaceYAML(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", name)
}

// ConfigMapYAML is ConfigMap ns/name with one data key, "value". labels
// are key, value pairs, each value written as given (a YAML scalar).
func ConfigMapYAML(ns, name, value string, labels ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns)
	if len(labels) > 0 {
		b.WriteString("  labels:\n")
		for i := 0; i+1 < len(labels); i += 2 {
			fmt.Fprintf(&b, "    %s: %s\n", labels[i], labels[i+1])
		}
	}
	fmt.Fprintf(&b, "data:\n  value: %q\n", value)
	return b.String()
}

// ConfigMapFleet writes, under FleetDir, a fleet that sends every
// ConfigMap of ns to the push clusters: their Cluster objects, the
// Namespace and the policy.
func (c *Checkout) ConfigMapFleet(ns string, clusters ...string) {
	c.t.Helper()
	for _, name := range clusters {
		c.Write(FleetDir+"/clusters/"+name+".yaml", ClusterYAML(name, "Push"))
	}
	c.Write(FleetDir+"/namespace.yaml", NamespaceYAML(ns))
	c.Write(FleetDir+"/policy.yaml", Policy{Namespace: ns, Clusters: clusters}.YAML())
}

// Policy is a PropagationPolicy that sends every object of one core kind
// in its namespace to the named clusters.
type Policy struct {
	// Name defaults to the kind's plural in lower case ("configmaps").
	Name      string
	Namespace string
	// Kind is a core (v1) kind; ConfigMap when empty.
	Kind     string
	Clusters []string
	// Scheduling is the replicaSchedulingType; left out when empty.
	Scheduling string
	// Tolerate lists NoExecute taint keys the policy tolerates for
	// TolerateFor, in that order.
	Tolerate    []string
	TolerateFor time.Duration
	// PurgeDirectly adds cluster failover with purge mode Directly.
	PurgeDirectly bool
}

// YAML renders p.
func (p Policy) YAML() string {
	kind := p.Kind
	if kind == "" {
		kind = "ConfigMap"
	}
	name := p.Name
	if name == "" {
		name = strings.ToLower(kind) + "s"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: %s\n  namespace: %s\n", name, p.Namespace)
	fmt.Fprintf(&b, "spec:\n  resourceSelectors:\n  - apiVersion: v1\n    kind: %s\n  placement:\n    clusterAffinity:\n      clusterNames:\n", kind)
	for _, c := range p.Clusters {
		fmt.Fprintf(&b, "      - %s\n", c)
	}
	if len(p.Tolerate) > 0 {
		b.WriteString("    clusterTolerations:\n")
		for _, key := range p.Tolerate {
			fmt.Fprintf(&b, "    - key: %s\n      operator: Exists\n      effect: NoExecute\n      tolerationSeconds: %d\n", key, int(p.TolerateFor.Seconds()))
		}
	}
	if p.Scheduling != "" {
		fmt.Fprintf(&b, "    replicaScheduling:\n      replicaSchedulingType: %s\n", p.Scheduling)
	}
	if p.PurgeDirectly {
		b.WriteString("  failover:\n    cluster:\n      purgeMode: Directly\n")
	}
	return b.String()
}
