// Package shard splits work between controller replicas through Leases on
// the hub. Each replica announces itself with a Lease of its own; every
// replica sees the same live set and gives each key (a member, or the one
// recording role) to one live replica by rendezvous hashing, so a replica
// joining or leaving moves only the keys it wins or held (about 1/N). A
// replica acts on a key only while it holds the key's Lease, taken with
// client-go's leader election: two replicas with different views of the
// live set never act on one key at once, and a killed replica's keys are
// taken over once its Leases expire.
package shard

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// RecorderKey is the key of the role that renders and records the Works:
// one replica at a time holds it.
const RecorderKey = "propagit-recorder"

// MemberKey is the key of a member: the replica holding it applies to it.
// Cluster names are DNS labels, so the Lease name is valid and cannot
// collide with RecorderKey.
func MemberKey(cluster string) string { return "propagit-member-" + cluster }

// replicaLabel marks the Leases replicas announce themselves with.
const replicaLabel = workv1alpha1.AnnotationPrefix + "shard-replica" // propagit.io/shard-replica

// Options tune the Leases.
type Options struct {
	Namespace string
	// Identity names this replica (its pod name); unique among replicas.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's leader
	// election timings, for every key and for the replica's own Lease.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Sharder holds this replica's keys.
type Sharder struct {
	opts   Options
	client kubernetes.Interface
	log    logr.Logger
	clock  clock.WithTicker
	// release is called, synchronously, before this replica gives up a
	// key it held or right after it lost it: the caller stops acting on
	// the key before another replica can take it.
	release func(key string)

	mu        sync.Mutex
	live      []string
	wanted    []string
	electors  map[string]context.CancelFunc
	held      map[string]bool
	changed   chan struct{}
	runCtx    context.Context
	electorWG sync.WaitGroup
}

// New returns a Sharder; release is called as described on the field.
func New(client kubernetes.Interface, opts Options, release func(key string), log logr.Logger) *Sharder {
	return &Sharder{opts: opts, client: client, log: log, clock: clock.RealClock{}, release: release,
		electors: map[string]context.CancelFunc{}, held: map[string]bool{}, changed: make(chan struct{}, 1)}
}

// Changed signals when this replica gained or lost a key.
func (s *Sharder) Changed() <-chan struct{} { return s.changed }

// Holds reports whether this replica holds key's Lease now.
func (s *Sharder) Holds(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[key]
}

// Run announces this replica and follows the live set until ctx ends, then
// gives up every key (release first) and its own Lease.
func (s *Sharder) Run(ctx context.Context) error {
	s.mu.Lock()
	s.runCtx = ctx
	s.mu.Unlock()
	tick := s.clock.NewTicker(s.opts.RetryPeriod)
	defer tick.Stop()
	for {
		if err := s.heartbeat(ctx); err != nil && ctx.Err() == nil {
			s.log.Error(err, "failed to renew this replica's Lease")
		}
		if live, err := s.liveReplicas(ctx); err != nil {
			if ctx.Err() == nil {
				s.log.Error(err, "failed to list the live replicas; keeping the last view")
			}
		} else {
			s.setLive(live)
		}
		select {
		case <-ctx.Done():
			s.stopAll()
			s.forget()
			return nil
		case <-tick.C():
		}
	}
}

// Want sets the keys this replica may hold: of these, it competes for
// those it wins by rendezvous hashing over the live replicas, and gives up
// the others.
func (s *Sharder) Want(keys []string) {
	s.mu.Lock()
	s.wanted = slices.Clone(keys)
	s.mu.Unlock()
	s.rebalance()
}

func (s *Sharder) setLive(live []string) {
	s.mu.Lock()
	same := slices.Equal(s.live, live)
	if !same {
		s.log.Info("live replicas", "replicas", live)
	}
	s.live = live
	s.mu.Unlock()
	if !same {
		s.rebalance()
	}
}

// rebalance starts an elector for each wanted key this replica owns and
// stops (releasing first) those it no longer owns.
func (s *Sharder) rebalance() {
	s.mu.Lock()
	if s.runCtx == nil {
		s.mu.Unlock()
		return
	}
	own := map[string]bool{}
	for _, k := range s.wanted {
		if Owner(k, s.live) == s.opts.Identity {
			own[k] = true
		}
	}
	var stop []string
	for k := range s.electors {
		if !own[k] {
			stop = append(stop, k)
		}
	}
	var start []string
	for k := range own {
		if _, running := s.electors[k]; !running {
			start = append(start, k)
		}
	}
	s.mu.Unlock()
	for _, k := range stop {
		s.stop(k)
	}
	for _, k := range start {
		s.start(k)
	}
}

// Owner is the replica that wins key among live (sorted identities) by
// rendezvous hashing; "" when none is live.
func Owner(key string, live []string) string {
	best, bestScore := "", uint64(0)
	for _, r := range live {
		// A cryptographic hash: every replica computes the same scores,
		// and they are spread evenly (FNV's are not, for names this alike).
		sum := sha256.Sum256([]byte(key + "\x00" + r))
		if score := binary.BigEndian.Uint64(sum[:8]); best == "" || score > bestScore {
			best, bestScore = r, score
		}
	}
	return best
}

// start runs an elector for key until it is stopped, trying again when the
// Lease is lost while key is still owned.
func (s *Sharder) start(key string) {
	s.mu.Lock()
	ctx, cancel := context.WithCancel(s.runCtx)
	s.electors[key] = cancel
	s.electorWG.Add(1)
	s.mu.Unlock()
	lock := &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: s.opts.Namespace, Name: key},
		Client: s.client.CoordinationV1(), LockConfig: resourcelock.ResourceLockConfig{Identity: s.opts.Identity}}
	go func() {
		defer s.electorWG.Done()
		for ctx.Err() == nil {
			le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
				Lock: lock, LeaseDuration: s.opts.LeaseDuration, RenewDeadline: s.opts.RenewDeadline, RetryPeriod: s.opts.RetryPeriod,
				ReleaseOnCancel: true, Name: key,
				Callbacks: leaderelection.LeaderCallbacks{
					OnStartedLeading: func(context.Context) { s.setHeld(key, true) },
					OnStoppedLeading: func() {
						if s.setHeld(key, false) {
							s.release(key)
						}
					},
				},
			})
			if err != nil {
				s.log.Error(err, "invalid lease settings", "lease", key)
				return
			}
			le.Run(ctx)
		}
	}()
}

// stop gives key up: its user stops first, then the Lease is released.
func (s *Sharder) stop(key string) {
	s.mu.Lock()
	cancel, ok := s.electors[key]
	delete(s.electors, key)
	held := s.held[key]
	s.mu.Unlock()
	if !ok {
		return
	}
	// Not held any more as far as Holds says, so the user does not start
	// acting again; still held on the hub until the user has stopped.
	if held && s.setHeld(key, false) {
		s.release(key)
	}
	cancel() // ReleaseOnCancel: the next owner need not wait for expiry
}

func (s *Sharder) stopAll() {
	s.mu.Lock()
	keys := make([]string, 0, len(s.electors))
	for k := range s.electors {
		keys = append(keys, k)
	}
	s.mu.Unlock()
	for _, k := range keys {
		s.stop(k)
	}
	s.electorWG.Wait()
}

// setHeld records whether key is held; it reports whether that changed.
func (s *Sharder) setHeld(key string, held bool) bool {
	s.mu.Lock()
	if s.held[key] == held {
		s.mu.Unlock()
		return false
	}
	if held {
		s.held[key] = true
	} else {
		delete(s.held, key)
	}
	s.mu.Unlock()
	s.log.Info("lease", "key", key, "held", held)
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return true
}

// heartbeat creates or renews this replica's own Lease.
func (s *Sharder) heartbeat(ctx context.Context) error {
	leases := s.client.CoordinationV1().Leases(s.opts.Namespace)
	name := "propagit-replica-" + s.opts.Identity
	now := metav1.NewMicroTime(s.clock.Now())
	secs := int32(s.opts.LeaseDuration / time.Second)
	l, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.opts.Namespace, Labels: map[string]string{replicaLabel: "true"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &s.opts.Identity, LeaseDurationSeconds: &secs, RenewTime: &now}}
		_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &s.opts.Identity, &secs, &now
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

// liveReplicas lists the replicas whose Lease is not expired, this one
// always included, sorted.
func (s *Sharder) liveReplicas(ctx context.Context) ([]string, error) {
	list, err := s.client.CoordinationV1().Leases(s.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: replicaLabel + "=true"})
	if err != nil {
		return nil, fmt.Errorf("failed to list replica Leases: %w", err)
	}
	now := s.clock.Now()
	live := []string{s.opts.Identity}
	for _, l := range list.Items {
		sp := l.Spec
		if sp.HolderIdentity == nil || sp.RenewTime == nil || sp.LeaseDurationSeconds == nil || *sp.HolderIdentity == s.opts.Identity {
			continue
		}
		if now.Before(sp.RenewTime.Add(time.Duration(*sp.LeaseDurationSeconds) * time.Second)) {
			live = append(live, *sp.HolderIdentity)
		}
	}
	slices.Sort(live)
	return slices.Compact(live), nil
}

// forget deletes this replica's own Lease on the way out, so the others
// rebalance at once instead of after its expiry.
func (s *Sharder) forget() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.client.CoordinationV1().Leases(s.opts.Namespace).Delete(ctx, "propagit-replica-"+s.opts.Identity, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		s.log.Error(err, "failed to delete this replica's Lease; the others wait for it to expire")
	}
}
