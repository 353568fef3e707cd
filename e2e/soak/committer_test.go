package soak

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/propagit/propagit/e2e/e2etest"
)

// goodCommit is a commit every member must end up running.
type goodCommit struct {
	seq     int
	rev     string
	pushed  time.Time
	changed []string // template keys whose value became seq
}

// badKinds are the bad commits: broken YAML, an invalid policy (a render
// error) and a deletion of most templates without the trailer that allows
// it (the prune guard holds it).
var badKinds = []string{"yaml", "policy", "prune"}

// committer pushes a steady stream of commits to the fleet repository, as
// people do: each good commit sets the value of a few random templates to
// its sequence number; a bad commit (on request) sets values to "bad-N"
// and breaks the revision, and the next commit fixes it.
type committer struct {
	wc       *e2etest.WorkingCopy
	clusters []string // member1, member2 push; member3 pull
	modes    []string
	rng      *rand.Rand
	ev       *eventLog
	// notify is called after each push, as a Git host calls webhooks.
	notify func()

	mu     sync.Mutex
	seq    int
	values map[string]int // the newest good value of each template
	good   []goodCommit
	bad    map[string]int
	broken bool
	// holdUntil keeps a bad commit the tip until then.
	holdUntil time.Time
}

func newCommitter(dir, url string, clusters, modes []string, seed uint64, ev *eventLog) (*committer, error) {
	wc, err := e2etest.NewWorkingCopy(dir, url, branch, nil)
	if err != nil {
		return nil, err
	}
	wc.AuthorName, wc.AuthorEmail = "soak", "soak@propagit.invalid"
	return &committer{wc: wc, clusters: clusters, modes: modes,
		rng: rand.New(rand.NewPCG(seed, 0xc0ffee)), ev: ev, values: map[string]int{}, bad: map[string]int{}}, nil
}

// initial commits every template with value 1.
func (c *committer) initial() (goodCommit, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var all []string
	for _, t := range templates() {
		all = append(all, t.key())
	}
	return c.commitGood(all, "soak: initial fleet")
}

// step makes one good commit changing one to three random templates.
func (c *committer) step() (goodCommit, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := templates()
	n := 1 + c.rng.IntN(3)
	var keys []string
	for _, i := range c.rng.Perm(len(ts))[:n] {
		keys = append(keys, ts[i].key())
	}
	msg := "soak: update"
	if c.broken {
		msg = "soak: fix the bad commit and update"
	}
	return c.commitGood(keys, msg)
}

// commitGood writes the whole fleet with keys set to the next sequence
// number, commits and pushes it.
func (c *committer) commitGood(keys []string, msg string) (goodCommit, error) {
	c.seq++
	for _, k := range keys {
		c.values[k] = c.seq
	}
	if err := c.writeFleet(nil, "Duplicated", nil); err != nil {
		return goodCommit{}, err
	}
	rev, err := c.commitPush(fmt.Sprintf("%s (seq %d)", msg, c.seq))
	if err != nil {
		return goodCommit{}, err
	}
	g := goodCommit{seq: c.seq, rev: rev, pushed: time.Now(), changed: keys}
	c.good = append(c.good, g)
	c.broken = false
	c.ev.add("commit", "good seq=%d rev=%.8s changed=%v", g.seq, rev, keys)
	return g, nil
}

// badCommit makes a bad commit of kind, unless the newest commit is bad
// already; the committer's first step after fixAfter fixes it.
func (c *committer) badCommit(kind string, fixAfter time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken {
		c.ev.add("commit", "bad commit %s skipped: the newest commit is bad already", kind)
		return nil
	}
	c.seq++
	ts := templates()
	bad := map[string]string{}
	for _, i := range c.rng.Perm(len(ts))[:2] {
		bad[ts[i].key()] = "bad-" + strconv.Itoa(c.seq)
	}
	var drop map[string]bool
	scheduling := "Duplicated"
	switch kind {
	case "yaml":
		if err := c.wc.WriteFile(fleetDir+"/soak-a/broken.yaml", brokenYAML); err != nil {
			return err
		}
	case "policy":
		scheduling = "Sideways"
	case "prune":
		// Most templates gone (more than --max-prune-percent, 50%), no
		// trailer: the guard must hold the revision.
		bad, drop = nil, map[string]bool{}
		for _, i := range c.rng.Perm(len(ts))[:15] {
			drop[ts[i].key()] = true
		}
	}
	if err := c.writeFleet(bad, scheduling, drop); err != nil {
		return err
	}
	rev, err := c.commitPush(fmt.Sprintf("soak: bad commit, %s (seq %d)", kind, c.seq))
	if err != nil {
		return err
	}
	c.broken = true
	c.holdUntil = time.Now().Add(fixAfter)
	c.bad[kind]++
	c.ev.add("commit", "BAD kind=%s seq=%d rev=%.8s values=%v dropped=%d", kind, c.seq, rev, bad, len(drop))
	return nil
}

// writeFleet writes every file of the fleet from the newest good values,
// with bad values, a policy scheduling type and dropped templates laid
// over them; it removes what a bad commit added.
func (c *committer) writeFleet(bad map[string]string, scheduling string, drop map[string]bool) error {
	if scheduling == "Duplicated" && bad == nil && drop == nil {
		if err := os.Remove(filepath.Join(c.wc.Dir, fleetDir, "soak-a", "broken.yaml")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	for i, name := range c.clusters {
		if err := c.wc.WriteFile(fleetDir+"/clusters/"+name+".yaml", e2etest.ClusterYAML(name, c.modes[i])); err != nil {
			return err
		}
	}
	for _, ns := range namespaces {
		if err := c.wc.WriteFile(fleetDir+"/"+ns+"/namespace.yaml", e2etest.NamespaceYAML(ns)); err != nil {
			return err
		}
		if err := c.wc.WriteFile(fleetDir+"/"+ns+"/policy.yaml", policyYAML(ns, scheduling, c.clusters)); err != nil {
			return err
		}
	}
	for _, t := range templates() {
		p := filepath.Join(c.wc.Dir, filepath.FromSlash(t.path()))
		if drop[t.key()] {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			continue
		}
		v, ok := bad[t.key()]
		if !ok {
			v = strconv.Itoa(c.values[t.key()])
		}
		if err := c.wc.WriteFile(t.path(), configMapYAML(t, v)); err != nil {
			return err
		}
	}
	return nil
}

// commitPush commits every change and pushes the branch straight to the
// Git server (not through the proxy: the person committing is not under
// test).
func (c *committer) commitPush(msg string) (string, error) {
	rev, err := c.wc.CommitAll(msg)
	if err != nil {
		return "", err
	}
	if err := c.wc.PushBranch(""); err != nil {
		return "", err
	}
	if c.notify != nil {
		c.notify()
	}
	return rev, nil
}

// snapshot returns the newest good values and the good commits so far.
func (c *committer) snapshot() (map[string]int, []goodCommit, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	vals := make(map[string]int, len(c.values))
	for k, v := range c.values {
		vals[k] = v
	}
	return vals, append([]goodCommit(nil), c.good...), c.broken
}

// run commits every 1–3 s until until, leaving a bad commit alone until
// its fix is due.
func (c *committer) run(ctx context.Context, until time.Time) error {
	for {
		c.mu.Lock()
		wait := time.Duration(1000+c.rng.IntN(2000)) * time.Millisecond
		c.mu.Unlock()
		if time.Now().Add(wait).After(until) {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		if time.Now().Before(c.holdUntilTime()) {
			continue
		}
		if _, err := c.step(); err != nil {
			return err
		}
	}
	return nil
}

// finish fixes a bad commit left at the tip, so the last commit is good.
func (c *committer) finish() error {
	if _, _, broken := c.snapshot(); broken {
		_, err := c.step()
		return err
	}
	return nil
}

func (c *committer) holdUntilTime() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.holdUntil
}
