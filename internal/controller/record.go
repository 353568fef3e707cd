package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/guard"
	"github.com/propagit/propagit/internal/logging"
	"github.com/propagit/propagit/internal/render"
)

// renderWorks renders cur with the live status, the previous placement
// recorded in the Works and, while a Gracefully eviction waits on it, the
// health the clusters report. Every declared cluster gets a Work, an empty
// one when it receives nothing, so what it ran before is pruned.
// It also returns what the Works hold, the history of the next render once
// they are recorded.
func (c *Controller) renderWorks(ctx context.Context, cur *loaded, status map[string]*clusterv1alpha1.ClusterStatus) ([]*workv1alpha1.Work, *recording, error) {
	rec, err := c.previous(ctx)
	if err != nil {
		return nil, nil, err
	}
	now := c.clock.Now()
	health, unhealthy, reflected := c.health(ctx, rec, cur.set, now)
	res := c.memo.Render(render.Input{Set: cur.set, Status: status, Previous: rec.previous, Options: c.opts.Render, Now: now,
		Health: health, Unhealthy: unhealthy, Reflected: reflected, Charts: c.charts.For(cur.set)})
	c.recordRender(res)
	c.recordFailovers(res, now)
	byCluster := map[string]render.Work{}
	for _, w := range res.Works {
		byCluster[w.Cluster] = w
	}
	out := make([]*workv1alpha1.Work, 0, len(res.Clusters))
	recorded := make([]render.Work, 0, len(res.Clusters))
	problems := c.renderProblems(res)
	// Each object render shares between clusters is encoded once, and one
	// the memo carried over from the last pass is not encoded again.
	enc := c.encoder
	enc.Next()
	keys := objectKeys{}
	moved := failedOver(res.Bindings)
	rolled, err := c.planRollouts(ctx, cur, res, rec, now)
	if err != nil {
		return nil, nil, err
	}
	for _, cl := range res.Clusters {
		objs := byCluster[cl.Name].Objects
		if held, ok := rolled.objects[cl.Name]; ok {
			objs = held
		}
		w, err := toWork(cl, cur.revision, objs, enc)
		if err != nil {
			return nil, nil, err
		}
		maps.Copy(w.Annotations, problems[cl.Name])
		if held := rolled.held[cl.Name]; len(held) > 0 {
			w.Annotations[workv1alpha1.AnnotationRolloutHeld] = strings.Join(held, "\n")
		}
		if held := c.guard(cur, rec, cl, w, objs, keys, moved[cl.Name], now); held != nil {
			w, objs = held, rec.objects[cl.Name]
		}
		out = append(out, w)
		recorded = append(recorded, render.Work{Cluster: cl.Name, Objects: objs})
	}
	enc.Settle()
	return out, newRecording(out, recorded, &c.history), nil
}

// maxRenderErrorLines bounds the render errors one Work records.
const maxRenderErrorLines = 20

// renderProblems returns, per cluster, the annotations that record its
// render errors and unclaimed templates (none when it has neither), logs
// each error the first time it is seen and sets propagit_render_errors.
func (c *Controller) renderProblems(res *render.Result) map[string]map[string]string {
	errs := map[string][]string{}
	for _, e := range res.Errors {
		errs[e.Cluster] = append(errs[e.Cluster], e.String())
	}
	unclaimed := map[string][]string{}
	for _, u := range res.Unclaimed {
		for _, cl := range u.Clusters {
			unclaimed[cl] = append(unclaimed[cl], u.Template.String())
		}
	}
	hooks := helmHooks(res)
	out := map[string]map[string]string{}
	seen := map[string]bool{}
	scheduling := c.scheduleProblems(res, seen)
	for _, cl := range res.Clusters {
		lines := errs[cl.Name]
		c.opts.Metrics.RenderErrors(cl.Name, len(lines))
		ann := map[string]string{}
		if len(lines) > 0 {
			for _, l := range lines {
				seen[l] = true
				if !c.renderErrs[l] {
					c.log.Info("template failed to render; the cluster keeps what it runs", logging.KeyCluster, cl.Name, "error", l)
					c.event(cl.Name, corev1.EventTypeWarning, workv1alpha1.EventRenderFailed, l+"; the cluster keeps what it runs")
				}
			}
			if len(lines) > maxRenderErrorLines {
				lines = append(lines[:maxRenderErrorLines], fmt.Sprintf("… and %d more", len(lines)-maxRenderErrorLines))
			}
			ann[workv1alpha1.AnnotationRenderErrors] = strings.Join(lines, "\n")
		}
		if h := hooks[cl.Name]; len(h) > 0 {
			ann[workv1alpha1.AnnotationHelmHooks] = strings.Join(h, "\n")
		}
		if u := unclaimed[cl.Name]; len(u) > 0 {
			ann[workv1alpha1.AnnotationUnclaimed] = strings.Join(u, ",")
		}
		if scheduling != "" {
			ann[workv1alpha1.AnnotationScheduleErrors] = scheduling
		}
		out[cl.Name] = ann
	}
	c.renderErrs = seen
	return out
}

// scheduleProblems returns the templates the scheduler could not place,
// one line each as AnnotationScheduleErrors records them, and logs each the
// first time it is seen, with a Warning Event on the Works of the clusters
// that keep running the template (a template placed nowhere has no Work; its
// record is the annotation every Work carries). seen collects the lines
// reported in this pass.
func (c *Controller) scheduleProblems(res *render.Result, seen map[string]bool) string {
	var lines []string
	for _, b := range res.Bindings {
		if b.ScheduleError == "" {
			continue
		}
		kept := "placed nowhere"
		var on []string
		if b.KeptPrevious {
			for _, t := range b.Targets {
				on = append(on, t.Cluster)
			}
			kept = "keeps its previous placement"
		}
		line := fmt.Sprintf("%s: %s (%s)", b.Key, b.ScheduleError, kept)
		lines = append(lines, line)
		seen[line] = true
		if c.renderErrs[line] {
			continue
		}
		c.log.Info("template could not be scheduled", logging.KeyTemplate, b.Key.String(), "error", b.ScheduleError, "keptOn", on)
		for _, cl := range on {
			c.event(cl, corev1.EventTypeWarning, workv1alpha1.EventScheduleFailed, line)
		}
	}
	if len(lines) > maxRenderErrorLines {
		lines = append(lines[:maxRenderErrorLines], fmt.Sprintf("… and %d more", len(lines)-maxRenderErrorLines))
	}
	return strings.Join(lines, "\n")
}

// guard returns the Work to record instead of the new one w when w would
// delete more of member cl than the prune guard allows, by itself or with
// the revisions applied since the member's window opened (see
// guard.Window), and the commit does not acknowledge it: the recorded Work
// again, with the reason in an annotation. nil lets w go ahead, carrying
// the window to measure the next revisions against. Templates failover
// moved off the member (moved) do not count as deleted: that is the
// policy's decision, not a commit's. A member that is not Ready is guarded
// as well: a Work recorded for it now is applied the moment it is back.
func (c *Controller) guard(cur *loaded, rec *recording, cl *clusterv1alpha1.Cluster, w *workv1alpha1.Work, objs []*unstructured.Unstructured, keys objectKeys,
	moved map[workv1alpha1.ObjectKey]bool, now time.Time) *workv1alpha1.Work {
	prev := rec.work(cl.Name)
	if c.opts.Guard.MaxPercent >= 100 {
		c.opts.Metrics.PruneHeld(cl.Name, false)
		return nil
	}
	if prev == nil {
		c.opts.Metrics.PruneHeld(cl.Name, false)
		w.Annotations[guard.WindowAnnotation] = guard.NewWindow(keyList(objs, keys), now).Record()
		return nil
	}
	if keys.same(rec.objects[cl.Name], objs) {
		c.opts.Metrics.PruneHeld(cl.Name, false) // nothing removed
		keepWindow(w, prev)
		return nil
	}
	win, err := guard.ParseWindow(prev.Annotations[guard.WindowAnnotation])
	if err != nil && prev.Annotations[guard.WindowAnnotation] != "" {
		c.log.Info("prune guard window unreadable; it starts again from the recorded objects", logging.KeyCluster, cl.Name, "error", err.Error())
	}
	before, after := keyList(rec.objects[cl.Name], keys), keyList(objs, keys)
	if len(moved) > 0 {
		kept := make(map[workv1alpha1.ObjectKey]bool, len(after))
		for _, k := range after {
			kept[k] = true
		}
		for _, k := range before {
			if moved[k] && !kept[k] {
				after = append(after, k) // failover's, not the commit's
			}
		}
	}
	hold, next := guard.Judge(before, after, win, now, c.opts.Guard)
	if hold != nil && cur.allowPrune {
		c.log.Info("large prune acknowledged by the commit", logging.KeyCluster, cl.Name, logging.KeyRevision,
			workv1alpha1.ShortRevision(cur.revision), "removed", hold.Removed, "of", hold.Total)
		hold, next = nil, guard.NewWindow(after, now)
	}
	c.opts.Metrics.PruneHeld(cl.Name, hold != nil)
	if hold == nil {
		w.Annotations[guard.WindowAnnotation] = next.Record()
		return nil
	}
	return c.held(cur, cl, prev, hold)
}

// held is prev again, with the reason hold gives in an annotation; the
// reason is logged and sent as an Event once.
func (c *Controller) held(cur *loaded, cl *clusterv1alpha1.Cluster, prev *workv1alpha1.Work, hold *guard.Hold) *workv1alpha1.Work {
	held := prev.DeepCopy()
	held.Annotations = clusterAnnotations(cl)
	keepWindow(held, prev)
	held.Annotations[workv1alpha1.AnnotationPruneHeld] = "revision " + workv1alpha1.ShortRevision(cur.revision) + " " + hold.String()
	if prev.Annotations[workv1alpha1.AnnotationPruneHeld] != held.Annotations[workv1alpha1.AnnotationPruneHeld] {
		c.log.Info("revision held by the prune guard", logging.KeyCluster, cl.Name, logging.KeyRevision,
			workv1alpha1.ShortRevision(cur.revision), "removed", hold.Removed, "of", hold.Total)
		c.event(cl.Name, corev1.EventTypeWarning, workv1alpha1.EventPruneHeld, held.Annotations[workv1alpha1.AnnotationPruneHeld])
	}
	return held
}

// keepWindow carries prev's prune guard window over to w.
func keepWindow(w, prev *workv1alpha1.Work) {
	if win, ok := prev.Annotations[guard.WindowAnnotation]; ok {
		w.Annotations[guard.WindowAnnotation] = win
	}
}

// keyList returns the keys of objs.
func keyList(objs []*unstructured.Unstructured, keys objectKeys) []workv1alpha1.ObjectKey {
	out := make([]workv1alpha1.ObjectKey, 0, len(objs))
	for _, o := range objs {
		out = append(out, keys.of(o))
	}
	return out
}

// objectKeys are the keys of objects, each read once: render shares an
// object between the clusters that receive it unchanged.
type objectKeys map[*unstructured.Unstructured]workv1alpha1.ObjectKey

func (k objectKeys) of(o *unstructured.Unstructured) workv1alpha1.ObjectKey {
	key, ok := k[o]
	if !ok {
		key = workv1alpha1.KeyOf(o)
		k[o] = key
	}
	return key
}

// same reports whether before and after hold objects of the same keys at
// the same positions: the usual commit, which changes objects but removes
// none. Objects carried over unchanged are the very same pointers, so only
// changed ones are keyed.
func (k objectKeys) same(before, after []*unstructured.Unstructured) bool {
	if len(before) != len(after) {
		return false
	}
	for i, o := range before {
		if o != after[i] && k.of(o) != k.of(after[i]) {
			return false
		}
	}
	return true
}

// failedOver returns, by cluster, the templates failover moved off it
// (pending evictions and those ending in this render), with the
// dependencies only they pulled in there.
func failedOver(bindings []*render.Binding) map[string]map[workv1alpha1.ObjectKey]bool {
	out := map[string]map[workv1alpha1.ObjectKey]bool{}
	byName := map[string]map[string]bool{}
	for _, b := range bindings {
		for _, e := range b.Evictions {
			if out[e.Cluster] == nil {
				out[e.Cluster], byName[e.Cluster] = map[workv1alpha1.ObjectKey]bool{}, map[string]bool{}
			}
			out[e.Cluster][b.Key], byName[e.Cluster][b.Key.String()] = true, true
		}
	}
	for _, b := range bindings {
		if len(b.DependencyOf) == 0 {
			continue
		}
		for cl, evicted := range byName {
			if !slices.ContainsFunc(b.DependencyOf, func(ref string) bool { return !evicted[ref] }) {
				out[cl][b.Key] = true
			}
		}
	}
	return out
}

// toWork converts rendered objects to a Work record, encoding them with enc.
func toWork(cl *clusterv1alpha1.Cluster, revision string, objs []*unstructured.Unstructured, enc *workv1alpha1.Encoder) (*workv1alpha1.Work, error) {
	mode := cl.Spec.SyncMode
	if mode == "" {
		mode = clusterv1alpha1.SyncModePush
	}
	w := &workv1alpha1.Work{
		TypeMeta:   metav1.TypeMeta{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "Work"},
		ObjectMeta: metav1.ObjectMeta{Name: cl.Name, Annotations: clusterAnnotations(cl)},
		Spec: workv1alpha1.WorkSpec{Cluster: cl.Name, FormatVersion: workv1alpha1.FormatVersion,
			SourceRevision: revision, SyncMode: mode},
	}
	var err error
	if w.Spec.Manifests, err = enc.EncodeManifests(objs); err != nil {
		return nil, err
	}
	if len(w.Spec.Manifests) == 0 {
		w.Spec.Manifests = nil
	}
	return w, nil
}

// clusterAnnotations record on a Work the cluster as the render saw it: its
// Ready status (a cluster without status counts as Ready) and its taints.
// Nothing that changes on every probe (a pull agent stamps Ready with the
// probe time), so the Work is rewritten only on a real transition.
func clusterAnnotations(cl *clusterv1alpha1.Cluster) map[string]string {
	ann := map[string]string{workv1alpha1.AnnotationClusterReady: string(metav1.ConditionTrue)}
	if cl.Status != nil {
		ann[workv1alpha1.AnnotationClusterReady] = string(metav1.ConditionUnknown)
		if c := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ConditionReady); c != nil {
			ann[workv1alpha1.AnnotationClusterReady] = string(c.Status)
		}
	}
	var taints []string
	for _, t := range render.Taints(cl) {
		taints = append(taints, t.ToString())
	}
	if len(taints) > 0 {
		ann[workv1alpha1.AnnotationClusterTaints] = strings.Join(taints, ",")
	}
	return ann
}

// previous is what the Works last recorded hold. The store is read once,
// at start (a restart resumes from it); after that the controller, the
// store's only writer, remembers what it recorded.
func (c *Controller) previous(ctx context.Context) (*recording, error) {
	if c.recorded != nil {
		return c.recorded, nil
	}
	stored, err := c.works.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("failed to read the recorded works: %w", err)
	}
	rw := make([]render.Work, 0, len(stored))
	for _, w := range stored {
		objs, err := workv1alpha1.Objects(w)
		if err != nil {
			return nil, err
		}
		rw = append(rw, render.Work{Cluster: w.Spec.Cluster, Objects: objs})
	}
	return newRecording(stored, rw, &c.history), nil
}

// helmHooks lists, per cluster, the Helm hooks of the charts placed there:
// propagit does not apply them, and says so in the status.
func helmHooks(res *render.Result) map[string][]string {
	if res.Charts == nil {
		return nil
	}
	out := map[string][]string{}
	for _, b := range res.Charts.Charts {
		hooks := res.Charts.Hooks[b.Key]
		for _, t := range b.Targets {
			for _, h := range hooks {
				out[t.Cluster] = append(out[t.Cluster], b.Key.Display()+": "+h)
			}
		}
	}
	return out
}
