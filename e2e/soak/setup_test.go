package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/propagit/propagit/e2e/e2etest"
	"github.com/propagit/propagit/internal/gitserver"
	"github.com/propagit/propagit/internal/shard"
	"github.com/propagit/propagit/internal/testenv"
)

// hubNamespace holds the replicas' Leases on the hub.
const hubNamespace = "propagit-system"

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }

// buildBinary builds cmd/propagit into dir, in the background.
func buildBinary(dir string) (string, <-chan error) {
	done := make(chan error, 1)
	go func() {
		_, err := e2etest.BuildPropagit(dir)
		done <- err
	}()
	return filepath.Join(dir, "propagit"), done
}

// soak is everything one run holds.
type soak struct {
	t        testing.TB
	cfg      soakConfig
	dir      string
	logDir   string // events and process logs, kept when the soak fails
	bin      string
	env      *testenv.Env
	members  []*testenv.Member // member1, member2 push; member3 pull
	hub      *testenv.Member
	git      *gitserver.Server
	proxy    *gitProxy
	ev       *eventLog
	com      *committer
	replicas []*proc
	agent    *proc
	audits   []*auditLog
}

// startGit starts the Git server with the fleet repository and the proxy
// in front of it; it returns the URL propagit uses (through the proxy).
func (s *soak) startGit() string {
	srv, err := gitserver.New(filepath.Join(s.dir, "git"), gitserver.Options{})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(srv.Close)
	if _, err := srv.InitBare("fleet.git"); err != nil {
		s.t.Fatal(err)
	}
	p, err := newGitProxy(strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(p.close)
	s.git, s.proxy = srv, p
	return "http://" + p.addr() + "/fleet.git"
}

// identities writes each replica's kubeconfig folder (its own identity on
// each push member) and the agent's kubeconfig; it returns them.
func (s *soak) identities(ctx context.Context, ids []string) (map[string]string, string) {
	ttl := s.cfg.duration + 2*time.Hour
	dirs := map[string]string{}
	for _, id := range ids {
		dirs[id] = filepath.Join(s.dir, id, "kubeconfigs")
		for _, m := range s.members[:2] {
			if err := writeIdentityKubeconfig(ctx, m, "soak-"+id, filepath.Join(dirs[id], m.Name+".kubeconfig"), ttl); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	agentKC := filepath.Join(s.dir, "agent", "member.kubeconfig")
	if err := writeIdentityKubeconfig(ctx, s.members[2], "soak-agent", agentKC, ttl); err != nil {
		s.t.Fatal(err)
	}
	return dirs, agentKC
}

// startProcesses starts three replicas and the agent. With sharding one
// replica is never killed, so a busy process lives the whole run for the
// resource slopes: one that applies to one push member while all three
// live, so the other member's holder can be killed and hand it over.
func (s *soak) startProcesses(repoURL string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hubNamespace}}
	if _, err := s.hub.Client().CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		s.t.Fatal(err)
	}
	ids := []string{"r1", "r2", "r3"}
	kcDirs, agentKC := s.identities(ctx, ids)
	immortal := immortalReplica(ids, s.members[0].Name, s.members[1].Name)
	if s.cfg.mode == modeLeader {
		installWorkCRD(s.t, s.hub)
		immortal = "" // the leader does everything: any replica may be killed
	}
	hookToken := filepath.Join(s.dir, "webhook-token")
	if err := os.WriteFile(hookToken, []byte(webhookToken), 0o600); err != nil {
		s.t.Fatal(err)
	}
	for _, id := range ids {
		s.replicas = append(s.replicas, s.newProc(id, id != immortal, func(dir, metrics string) []string {
			return replicaArgs(s.cfg.mode, id, repoURL, kcDirs[id], s.hub.KubeconfigPath, dir, metrics, hookToken)
		}))
	}
	s.agent = s.newProc("agent", true, func(dir, metrics string) []string {
		return agentArgs(s.cfg.mode, s.members[2].Name, repoURL, agentKC, s.hub.KubeconfigPath, dir, metrics)
	})
	for _, p := range s.replicas {
		p.restartOnExit = s.cfg.mode == modeLeader
	}
	for _, p := range append(append([]*proc(nil), s.replicas...), s.agent) {
		if err := p.start(); err != nil {
			s.t.Fatal(err)
		}
		s.t.Cleanup(func() { p.kill() })
	}
	s.t.Cleanup(func() {
		if s.t.Failed() {
			for _, p := range append(append([]*proc(nil), s.replicas...), s.agent) {
				s.t.Logf("%s: tail of its log:\n%s", p.name, p.logTail(40))
			}
		}
	})
}

// installWorkCRD installs the Work CRD on hub and waits until it serves.
func installWorkCRD(t testing.TB, hub *testenv.Member) {
	e2etest.InstallCRD(t, hub, e2etest.WorkCRD(t), time.Minute, 100*time.Millisecond)
}

// immortalReplica is the replica never killed: one owning exactly one of
// the push members while all replicas live, else one owning none.
func immortalReplica(ids []string, push ...string) string {
	owned := map[string]int{}
	for _, m := range push {
		owned[shard.Owner(shard.MemberKey(m), ids)]++
	}
	for _, want := range []int{1, 0} {
		for _, id := range ids {
			if owned[id] == want {
				return id
			}
		}
	}
	return ids[0]
}

// newProc prepares a process slot with its own folder and metrics port.
func (s *soak) newProc(name string, killable bool, args func(dir, metrics string) []string) *proc {
	dir := filepath.Join(s.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.t.Fatal(err)
	}
	metrics := e2etest.FreeAddr(s.t)
	return &proc{name: name, bin: s.bin, args: args(dir, metrics), metrics: metrics,
		logPath: filepath.Join(s.logDir, name+".log"), killable: killable}
}

// waitInitial waits until every member holds every template at its first
// value: the steady state the faults start from.
func (s *soak) waitInitial(bound time.Duration) time.Duration {
	began := time.Now()
	deadline := began.Add(bound)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		var missing []string
		for _, m := range s.members {
			objs, err := list(context.Background(), m)
			if err != nil {
				missing = append(missing, m.Name+": "+err.Error())
				continue
			}
			if len(objs) < templateCount {
				missing = append(missing, fmt.Sprintf("%s: %d of %d templates", m.Name, len(objs), templateCount))
			}
		}
		if len(missing) == 0 {
			return time.Since(began)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the first commit did not reach every member within %s: %s", bound, strings.Join(missing, "; "))
		}
		<-tick.C
	}
}
