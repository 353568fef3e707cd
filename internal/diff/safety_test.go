package diff

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// TestOrphanIsNoDeletion: an object the head lists as an orphan leaves the
// Work but is kept on its member, so it is neither a removal nor a
// deletion; the other removal still is.
func TestOrphanIsNoDeletion(t *testing.T) {
	web, cfg := deployment("web", 2, "web:1"), configMap("cfg", "x")
	base := result(map[string][]*unstructured.Unstructured{"a": {cfg, web}, "b": {web}})
	head := result(map[string][]*unstructured.Unstructured{"a": {configMap("other", "y")}})
	head.Orphans = []render.Orphan{
		{Cluster: "a", Template: workv1alpha1.KeyOf(web), Object: web, Reason: render.OrphanPreserved},
		{Cluster: "b", Template: workv1alpha1.KeyOf(web), Object: web, Reason: render.OrphanPreserved},
	}
	r := Compare(Input{Base: base, Head: head})
	wantDeleted := []Deletion{{Ref: Ref{Group: "core", Kind: "ConfigMap", Namespace: "demo", Name: "cfg"}, Clusters: []string{"a"}}}
	if d := cmp.Diff(wantDeleted, r.Deletions); d != "" {
		t.Errorf("deletions (-want +got):\n%s", d)
	}
	wantOrphaned := []Orphaned{{Ref: Ref{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "web"}, Clusters: []string{"a", "b"}, Reason: render.OrphanPreserved}}
	if d := cmp.Diff(wantOrphaned, r.Orphaned); d != "" {
		t.Errorf("orphaned (-want +got):\n%s", d)
	}
	for _, c := range r.Clusters {
		for _, o := range c.Objects {
			if o.Kind == "Deployment" {
				t.Errorf("%s: the orphaned Deployment is listed as %s", c.Name, o.Change)
			}
		}
	}
	if !strings.Contains(r.Text(), "Deployment.apps/demo/web stays on a, b (preserveResourcesOnDeletion)") {
		t.Errorf("text:\n%s", r.Text())
	}
}

// TestRenderErrorsAndUnclaimedAreReported: the head's render errors and
// unclaimed templates appear in every format, apart from the warnings.
func TestRenderErrorsAndUnclaimedAreReported(t *testing.T) {
	web := workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "web"}
	head := result(map[string][]*unstructured.Unstructured{"a": {deployment("web", 2, "web:1")}})
	head.Errors = []render.RenderError{{Template: web, Source: load.Source{Path: "apps/web.yaml", Line: 3}, Cluster: "a",
		Policy: "OverridePolicy.policy.karmada.io/demo/typo", Rule: 1, Overrider: "overrideRules[1].overriders.plaintext", Message: "path does not exist", Kept: true}}
	head.Unclaimed = []render.Unclaimed{{Template: web, Source: load.Source{Path: "apps/web.yaml", Line: 3}, Clusters: []string{"a"}}}
	r := Compare(Input{Base: head, Head: head, Root: "fleet"})
	if r.Differs || len(r.Warnings) != 0 || len(r.RenderErrors) != 1 || len(r.Unclaimed) != 1 {
		t.Fatalf("report: %+v", r)
	}
	line := "fleet/apps/web.yaml:3: Deployment.apps/demo/web on a: " + RenderErrorText + ": OverridePolicy.policy.karmada.io/demo/typo rule 1 overrideRules[1].overriders.plaintext: path does not exist"
	if text := r.Text(); !strings.Contains(text, line) || !strings.Contains(text, "Deployment.apps/demo/web: "+render.UnclaimedMessage+" (a)") {
		t.Errorf("text:\n%s", text)
	}
	if md := r.Markdown(MarkdownLimit); !strings.Contains(md, RenderErrorText) || !strings.Contains(md, "**Unclaimed**") {
		t.Errorf("markdown:\n%s", md)
	}
}
