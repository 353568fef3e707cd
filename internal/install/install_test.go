package install

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSetArg(t *testing.T) {
	base := []string{"controller", "--repo=https://old", "--leader-elect", "--path=a"}
	tests := []struct {
		name, flag, value string
		want              []string
	}{
		{"replace a value", "--repo", "https://new", []string{"controller", "--repo=https://new", "--leader-elect", "--path=a"}},
		{"replace a bare flag", "--leader-elect", "false", []string{"controller", "--repo=https://old", "--leader-elect=false", "--path=a"}},
		{"append a missing flag", "--branch", "prod", append(append([]string{}, base...), "--branch=prod")},
		{"an empty value removes the flag", "--path", "", []string{"controller", "--repo=https://old", "--leader-elect"}},
		{"a prefix is not the flag", "--rep", "x", append(append([]string{}, base...), "--rep=x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := setArg(append([]string{}, base...), tt.flag, tt.value)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildDefaults: with only a repository, install is deploy/ as written,
// the repository set: every object, the controller args, no ServiceMonitor.
func TestBuildDefaults(t *testing.T) {
	o := DefaultOptions()
	o.Repo = "https://git.example.com/fleet.git"
	objs, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, u := range objs {
		got[ref(u)] = true
	}
	for _, want := range []string{
		"Namespace/propagit-system", "Namespace/karmada-cluster", "CustomResourceDefinition.apiextensions.k8s.io/works.propagit.io",
		"ServiceAccount/propagit-system/propagit-controller", "Role.rbac.authorization.k8s.io/propagit-system/propagit-controller",
		"Role.rbac.authorization.k8s.io/karmada-cluster/propagit-member-credentials", "RoleBinding.rbac.authorization.k8s.io/karmada-cluster/propagit-member-credentials",
		"Deployment.apps/propagit-system/propagit-controller", "Service/propagit-system/propagit-controller",
		"NetworkPolicy.networking.k8s.io/propagit-system/propagit-controller", "PodDisruptionBudget.policy/propagit-system/propagit-controller",
	} {
		if !got[want] {
			t.Errorf("missing %s; built %v", want, got)
		}
	}
	if got["ServiceMonitor.monitoring.coreos.com/propagit-system/propagit-controller"] {
		t.Error("the ServiceMonitor is optional and was not asked for")
	}
	args := controllerArgs(t, objs)
	want := []string{"controller", "--repo=https://git.example.com/fleet.git", "--branch=main", "--works-store=git",
		"--controller-namespace=propagit-system", "--cache-dir=/cache", "--health-addr=:8081", "--http-addr=:8080", "--leader-elect"}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("controller args (-want +got):\n%s", diff)
	}
}

// TestBuildNamespace moves everything of propagit-system, binding subjects
// included, and leaves the credentials namespace where Clusters point.
func TestBuildNamespace(t *testing.T) {
	o := DefaultOptions()
	o.Repo, o.Namespace, o.ServiceMonitor = "https://git.example.com/fleet.git", "fleet-ops", true
	objs, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	monitor := false
	for _, u := range objs {
		if u.GetNamespace() == BaseNamespace || u.GetName() == BaseNamespace {
			t.Errorf("%s still in %s", ref(u), BaseNamespace)
		}
		subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
		for _, s := range subjects {
			if ns := s.(map[string]any)["namespace"]; ns != "fleet-ops" {
				t.Errorf("%s: subject in namespace %v, want fleet-ops", ref(u), ns)
			}
		}
		if u.GetKind() == "Role" && u.GetName() == "propagit-member-credentials" && u.GetNamespace() != "karmada-cluster" {
			t.Errorf("the credentials Role moved to %s", u.GetNamespace())
		}
		monitor = monitor || ref(u) == "ServiceMonitor.monitoring.coreos.com/fleet-ops/propagit-controller"
	}
	if !monitor {
		t.Error("--service-monitor: no ServiceMonitor in fleet-ops")
	}
}

func controllerArgs(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		args, _, err := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		if err != nil {
			t.Fatal(err)
		}
		return args
	}
	t.Fatal("no Deployment")
	return nil
}

// TestBuildShard runs the replicas with --shard in place of --leader-elect.
func TestBuildShard(t *testing.T) {
	o := DefaultOptions()
	o.Repo, o.Shard, o.Replicas = "https://git.example.com/fleet.git", true, 3
	objs, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"controller", "--repo=https://git.example.com/fleet.git", "--branch=main", "--works-store=git",
		"--controller-namespace=propagit-system", "--cache-dir=/cache", "--health-addr=:8081", "--http-addr=:8080", "--shard=true"}
	if diff := cmp.Diff(want, controllerArgs(t, objs)); diff != "" {
		t.Errorf("controller args (-want +got):\n%s", diff)
	}
}

// TestBuildRefusesCredentialsInRepo: a token written into --repo would land
// in the Deployment's args, readable by anyone who may read Deployments and
// shown in every process listing. Build refuses it, points at the Secret,
// and never quotes the token.
func TestBuildRefusesCredentialsInRepo(t *testing.T) {
	for _, repo := range []string{
		"https://bot:s3cret-token@git.example.com/fleet.git",
		"https://s3cret-token@git.example.com/fleet.git",
		"http://bot:s3cret-token@git.example.com/fleet.git",
		"ssh://git:s3cret-token@git.example.com/fleet.git",
	} {
		o := DefaultOptions()
		o.Repo = repo
		objs, err := Build(o)
		if err == nil {
			t.Errorf("%s: built %d objects, want an error", repo, len(objs))
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "s3cret-token") || !strings.Contains(msg, "propagit-git") || !strings.Contains(msg, "--repo") {
			t.Errorf("%s: error %q, want one naming --repo and Secret propagit-git without the token", repo, msg)
		}
	}
	// A user name alone is how SSH names its account: not a secret.
	o := DefaultOptions()
	o.Repo = "ssh://git@git.example.com/fleet.git"
	if _, err := Build(o); err != nil {
		t.Errorf("ssh user name: %v", err)
	}
}
