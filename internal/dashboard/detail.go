package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/render"
)

// Redacted replaces each Secret value the dashboard would show.
const Redacted = "REDACTED"

// explainTimeout bounds the render behind one explain trace.
const explainTimeout = 30 * time.Second

type detailBody struct {
	Name       string
	Placements []Placement
	Manifests  []manifest
	Explain    *render.Explanation
	// ExplainError says why there is no trace.
	ExplainError string
	Revision     string
}

// ShowState says whether the placements' State column has anything to
// show: a column empty in every row is left out.
func (b *detailBody) ShowState() bool {
	return slices.ContainsFunc(b.Placements, func(p Placement) bool { return p.Unclaimed || p.Frozen || p.Evicted != "" })
}

// manifest is one member's rendered object, as YAML with Secret values
// redacted.
type manifest struct {
	Cluster, YAML string
}

func (s *Server) templateDetail(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	s.servePage(w, r, "template", name, func(snap *Snapshot) (any, int) {
		body := &detailBody{Name: name, Placements: snap.templates().by[name], Revision: snap.Newest}
		if len(body.Placements) == 0 {
			body.ExplainError = "no member runs a template of this name"
			return body, http.StatusNotFound
		}
		for _, p := range body.Placements {
			data, err := yaml.Marshal(redact(p.obj).Object)
			if err != nil {
				data = []byte(fmt.Sprintf("# failed to encode: %v", err))
			}
			body.Manifests = append(body.Manifests, manifest{Cluster: p.Cluster, YAML: string(data)})
		}
		body.Explain, body.ExplainError = s.explain(r.Context(), snap, name)
		return body, http.StatusOK
	})
}

// explain computes the trace `propagit explain` prints for the template,
// from the source at the newest recorded revision.
func (s *Server) explain(ctx context.Context, snap *Snapshot, name string) (*render.Explanation, string) {
	if s.opts.Source == nil {
		return nil, "no source repository is configured: pass --repo to see why the template landed where it did"
	}
	if snap.Newest == "" {
		return nil, "no revision recorded yet"
	}
	ctx, cancel := context.WithTimeout(ctx, explainTimeout)
	defer cancel()
	res, err := s.renderAt(ctx, snap.Newest, snap.Inputs)
	if err != nil {
		return nil, err.Error()
	}
	b := res.bindings[name]
	if b == nil {
		return nil, fmt.Sprintf("revision %s has no template %s (removed from Git, kept on its members)", workv1alpha1.DisplayRevision(snap.Newest), name)
	}
	e := render.Explain(b, res.clusters)
	if b.Key.Group == "" && b.Key.Kind == "Secret" {
		for i := range e.Targets {
			for j := range e.Targets[i].Changes {
				e.Targets[i].Changes[j] = "an override changed a value of this Secret (" + Redacted + ")"
			}
		}
	}
	return &e, ""
}

// redact returns obj, or for a Secret a copy whose data and stringData
// values, and the last-applied annotation that repeats them, are replaced.
func redact(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj.GroupVersionKind().Group != "" || obj.GetKind() != "Secret" {
		return obj
	}
	cp := obj.DeepCopy()
	for _, field := range []string{"data", "stringData"} {
		m, found, _ := unstructured.NestedMap(cp.Object, field)
		if !found {
			continue
		}
		for k := range m {
			m[k] = Redacted
		}
		_ = unstructured.SetNestedMap(cp.Object, m, field)
	}
	if ann := cp.GetAnnotations(); ann != nil {
		if _, ok := ann["kubectl.kubernetes.io/last-applied-configuration"]; ok {
			ann["kubectl.kubernetes.io/last-applied-configuration"] = Redacted
			cp.SetAnnotations(ann)
		}
	}
	return cp
}
