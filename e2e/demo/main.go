// Command demo runs one of the examples on this machine: two real member
// clusters (etcd + kube-apiserver + controller-manager + scheduler + kwok),
// a local Git repository holding examples/<example>/fleet, and
// `propagit controller` applying it. It stays in the foreground until Ctrl-C
// and then stops everything; meanwhile `stop member1` and `start member1`
// typed on its input kill and restart a member's apiserver, to watch a
// failover. A second run reuses the repository in .demo/<example>/.
//
// Run it with `make demo` (examples/quickstart) or
// `make demo EXAMPLE=failover`.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/propagit/propagit/internal/testenv"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run() error {
	example := flag.String("example", "quickstart", "the folder under examples/ whose fleet/ to apply")
	flag.Parse()
	if _, err := os.Stat(filepath.Join("examples", *example, "fleet")); err != nil {
		return fmt.Errorf("no fleet for example %q: %w", *example, err)
	}
	state, err := filepath.Abs(filepath.Join(".demo", *example))
	if err != nil {
		return err
	}
	bin, err := filepath.Abs("bin/propagit")
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s is missing: run make build first", bin)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	say("starting 2 member clusters (about 15 s)…")
	env, err := testenv.New(testenv.Options{Members: 2, Workloads: true})
	if err != nil {
		return err
	}
	defer func() { say("stopping the members"); _ = env.Stop() }()
	kubeconfigs := filepath.Join(state, "kubeconfigs")
	if err := os.MkdirAll(kubeconfigs, 0o755); err != nil {
		return err
	}
	for _, m := range env.Members {
		b, err := os.ReadFile(m.KubeconfigPath)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(kubeconfigs, m.Name+".kubeconfig"), b, 0o600); err != nil {
			return err
		}
	}
	repo, err := ensureRepo(state, *example)
	if err != nil {
		return err
	}
	ctrl := exec.CommandContext(ctx, bin, "controller", "--repo", "file://"+repo, "--branch", "main",
		"--kubeconfig-dir", kubeconfigs, "--works-store", "git", "--interval", "5s",
		"--cache-dir", filepath.Join(state, "cache"), "--health-addr", "", "--log-format", "console")
	logFile, err := os.Create(filepath.Join(state, "controller.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	ctrl.Stdout, ctrl.Stderr = logFile, logFile
	if err := ctrl.Start(); err != nil {
		return err
	}
	say("controller started (log: " + filepath.Join(".demo", *example, "controller.log") + "); waiting until both members run revision HEAD…")
	if err := waitApplied(ctx, bin, repo); err != nil {
		return err
	}
	status := exec.Command(bin, "status", "--repo", "file://"+repo)
	status.Stdout, status.Stderr = os.Stdout, os.Stderr
	_ = status.Run()
	fmt.Printf(`
Try it:
  kubectl --kubeconfig %[1]s/member1.kubeconfig -n demo get deploy,svc
  kubectl --kubeconfig %[1]s/member2.kubeconfig -n demo get deploy
  git clone %[2]s /tmp/fleet && edit, commit, git push   # the controller polls every 5 s
  bin/propagit status --repo file://%[2]s

Type here:
  stop member1    kill member1's kube-apiserver, as a crash would: with
                  examples/failover the app moves to member2 once member1 has
                  been NotReady (after 30 s of failed probes) for the policy's
                  tolerationSeconds (120 s)
  start member1   bring it back (Gracefully: the old copy goes once member2 is healthy)
  status          propagit status

Press Ctrl-C to stop the members and the controller.
`, kubeconfigs, repo)
	go commands(ctx, env, bin, repo)
	<-ctx.Done()
	_ = ctrl.Wait()
	return nil
}

// commands reads "stop NAME", "start NAME" and "status" lines from stdin.
func commands(ctx context.Context, env *testenv.Env, bin, repo string) {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() && ctx.Err() == nil {
		fields := strings.Fields(in.Text())
		if len(fields) == 0 {
			continue
		}
		if fields[0] == "status" {
			status := exec.Command(bin, "status", "--repo", "file://"+repo)
			status.Stdout, status.Stderr = os.Stdout, os.Stderr
			_ = status.Run()
			continue
		}
		var member *testenv.Member
		for _, m := range env.Members {
			if len(fields) == 2 && m.Name == fields[1] {
				member = m
			}
		}
		switch {
		case member == nil || (fields[0] != "stop" && fields[0] != "start"):
			fmt.Println("usage: stop NAME | start NAME | status   (members: member1, member2)")
		case fields[0] == "stop":
			if err := member.KillAPIServer(); err != nil {
				fmt.Println("stop:", err)
				continue
			}
			say(member.Name + "'s kube-apiserver is down (" + time.Now().Format("15:04:05") + ")")
		default:
			if err := member.StartAPIServer(); err != nil {
				fmt.Println("start:", err)
				continue
			}
			say(member.Name + "'s kube-apiserver is back (" + time.Now().Format("15:04:05") + ")")
		}
	}
}

// waitApplied polls `propagit status -o json` until every cluster runs the
// newest revision, or two minutes pass.
func waitApplied(ctx context.Context, bin, repo string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		out, err := exec.CommandContext(ctx, bin, "status", "--repo", "file://"+repo, "-o", "json").Output()
		if err == nil && applied(out) {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.New("interrupted")
		case <-time.After(2 * time.Second):
		}
	}
	return errors.New("the members did not report the revision applied within 2 minutes; see the controller.log in .demo/<example>/")
}

func say(msg string) { fmt.Println("==> " + msg) }
