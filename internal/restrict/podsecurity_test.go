package restrict

import (
	"os"
	"path/filepath"
	"testing"
)

func pod(ns, spec string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: " + ns + "}\nspec:\n" + spec
}

const plainContainers = "  containers: [{name: a, image: busybox}]\n"

// loadPolicy writes a policy file and loads it.
func loadPolicy(t *testing.T, content string) *Policy {
	t.Helper()
	f := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Load(f)
	if err != nil {
		t.Fatalf("policy %q: %v", content, err)
	}
	return p
}

// TestPodSecurityBaselineEverywhere: the default policy holds every pod
// template, in every namespace, to the Pod Security Standards' baseline
// (issue #25: a privileged, hostPID, hostPath pod passed in any namespace
// but the system ones, and SYS_ADMIN, hostPort and Unconfined seccomp
// passed everywhere).
func TestPodSecurityBaselineEverywhere(t *testing.T) {
	runVerdicts(t, nil, []verdictCase{
		{"privileged in an application namespace", pod("team-a", "  containers: [{name: a, image: b, securityContext: {privileged: true}}]\n"), RulePodSecurity, "spec"},
		{"hostPID, hostPath", pod("team-a", "  hostPID: true\n  volumes: [{name: r, hostPath: {path: /}}]\n"+plainContainers), RulePodSecurity, "spec"},
		{"SYS_ADMIN", pod("team-a", "  containers: [{name: a, image: b, securityContext: {capabilities: {add: [SYS_ADMIN]}}}]\n"), RulePodSecurity, "spec"},
		{"a host port", pod("team-a", "  containers: [{name: a, image: b, ports: [{containerPort: 80, hostPort: 80}]}]\n"), RulePodSecurity, "spec"},
		{"seccomp Unconfined", pod("team-a", "  securityContext: {seccompProfile: {type: Unconfined}}\n"+plainContainers), RulePodSecurity, "spec"},
		{"an unsafe sysctl", pod("team-a", "  securityContext: {sysctls: [{name: kernel.msgmax, value: '1'}]}\n"+plainContainers), RulePodSecurity, "spec"},
		{"an unmasked /proc", pod("team-a", "  containers: [{name: a, image: b, securityContext: {procMount: Unmasked}}]\n"), RulePodSecurity, "spec"},
		{"an ephemeral container", pod("team-a", plainContainers+"  ephemeralContainers: [{name: e, image: b, securityContext: {privileged: true}}]\n"), RulePodSecurity, "spec"},
		{"a hostNetwork DaemonSet", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d, namespace: team-a}\nspec:\n  template:\n    spec:\n      hostNetwork: true\n" +
			"      containers: [{name: a, image: b}]\n", RulePodSecurity, "spec.template.spec"},
		{"a CronJob's pod", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c, namespace: team-a}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n" +
			"          hostIPC: true\n          containers: [{name: a, image: b}]\n", RulePodSecurity, "spec.jobTemplate.spec.template.spec"},
		{"a PodTemplate", "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: t, namespace: team-a}\ntemplate:\n  spec:\n    hostPID: true\n    containers: [{name: a, image: b}]\n", RulePodSecurity, "template.spec"},
		{"an Argo Rollout", "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r, namespace: team-a}\nspec:\n  template:\n    spec:\n" +
			"      containers: [{name: a, image: b, securityContext: {privileged: true}}]\n", RulePodSecurity, "spec.template.spec"},
		{"a JobSet's jobs", "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: j, namespace: team-a}\nspec:\n  replicatedJobs:\n  - name: ok\n    template: {spec: {template: {spec: {containers: [{name: a, image: b}]}}}}\n" +
			"  - name: bad\n    template: {spec: {template: {spec: {hostPID: true, containers: [{name: a, image: b}]}}}}\n", RulePodSecurity, "spec.replicatedJobs[1].template.spec.template.spec"},
		{"a hostPath PersistentVolume", "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  hostPath: {path: /etc}\n", RulePodSecurity, "spec.hostPath"},
		{"a pod spec that does not decode", pod("team-a", "  hostPID: 'yes'\n"+plainContainers), RulePodSecurity, "spec"},
		{"a plain pod", pod("team-a", plainContainers), "", ""},
		{"a Knative Service, fields beside the pod spec", "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: s, namespace: team-a}\nspec:\n  template:\n    spec:\n" +
			"      containerConcurrency: 10\n      timeoutSeconds: 30\n      containers: [{name: a, image: b}]\n", "", ""},
		{"NET_BIND_SERVICE and RuntimeDefault", pod("team-a", "  securityContext: {seccompProfile: {type: RuntimeDefault}}\n"+
			"  containers: [{name: a, image: b, securityContext: {capabilities: {add: [NET_BIND_SERVICE]}}}]\n"), "", ""},
	})
}

// TestPodSecurityLevels: restricted is selectable, privileged lifts the
// check, a folder may only narrow, and extra kinds are declared by path.
func TestPodSecurityLevels(t *testing.T) {
	restrictedPod := pod("team-a", "  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}\n"+
		"  containers: [{name: a, image: b, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}]\n")
	runVerdicts(t, loadPolicy(t, "podSecurity: restricted\n"), []verdictCase{
		{"a plain pod under restricted", pod("team-a", plainContainers), RulePodSecurity, "spec"},
		{"a restricted pod", restrictedPod, "", ""},
	})
	runVerdicts(t, loadPolicy(t, "podSecurity: privileged\n"), []verdictCase{
		{"a privileged pod under privileged", pod("team-a", "  hostPID: true\n"+plainContainers), "", ""},
	})
	custom := loadPolicy(t, "podSpecPaths:\n- {kind: Sandbox.agents.example.com, path: 'spec.podTemplate.spec'}\n")
	runVerdicts(t, custom, []verdictCase{
		{"a declared kind", "apiVersion: agents.example.com/v1\nkind: Sandbox\nmetadata: {name: s, namespace: team-a}\nspec:\n  podTemplate:\n    spec:\n" +
			"      hostNetwork: true\n      containers: [{name: a, image: b}]\n", RulePodSecurity, "spec.podTemplate.spec"},
	})
	folders := loadPolicy(t, "podSecurity: privileged\nfolders:\n- {path: teams, podSecurity: baseline}\n")
	priv := obj(t, pod("team-a", "  hostPID: true\n"+plainContainers))
	if r := folders.Check(priv, "platform/agent.yaml"); r != nil {
		t.Errorf("outside the folder: refused %v, want allowed", r)
	}
	if r := folders.Check(priv, "teams/a/agent.yaml"); r == nil || r.Rule != "folders" {
		t.Errorf("inside the baseline folder: %v, want refused by folders", r)
	}
}
