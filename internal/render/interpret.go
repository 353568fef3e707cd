package render

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/interpret"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/schedule"
)

// Where render consults ResourceInterpreterCustomizations (Karmada's
// configurable interpreter, which wins over the built-in one): GetReplicas
// before scheduling, ReviseReplica when a cluster's copy gets its share,
// GetDependencies for propagateDeps. A script error is a render error
// naming the customization, the script's file and line and the template;
// the clusters keep what they last recorded.

// interpretReplicas runs the template's GetReplicas script; nil, nil when
// its kind has none (the built-in rules decide).
func interpretReplicas(obj *unstructured.Unstructured, ip *interpret.Interpreter) (*schedule.Interpreted, error) {
	n, req, s, err := ip.InterpretReplica(obj)
	if s == nil || err != nil {
		return nil, err
	}
	out := &schedule.Interpreted{Replicas: n, By: fmt.Sprintf("%s (%s)", interpret.DisplayCustomization(s.Customization), s.Location())}
	if req != nil {
		out.NodeClaim = req.NodeClaim != nil
		for name, q := range req.ResourceRequest {
			if q.Sign() > 0 {
				if out.Requests == nil {
					out.Requests = corev1.ResourceList{}
				}
				out.Requests[name] = q
			}
		}
	}
	return out, nil
}

// reviseReplicasOf writes a cluster's share into obj: with the kind's
// ReviseReplica script when there is one, else by the built-in rules.
func reviseReplicasOf(obj *unstructured.Unstructured, replicas int32, ip *interpret.Interpreter) (*unstructured.Unstructured, error) {
	out, s, err := ip.ReviseReplica(obj, replicas)
	if s == nil {
		reviseReplicas(obj, replicas)
		return obj, nil
	}
	return out, err
}

// interpretFailure is a script error of b's template on cluster.
func interpretFailure(b *Binding, cluster string, err error) *RenderError {
	e := &RenderError{Template: b.Key, Source: b.Template.Source, Cluster: cluster, Rule: -1, Message: err.Error()}
	var ie *interpret.Error
	if errors.As(err, &ie) {
		e.PolicySource = load.Source{Path: ie.File, Line: ie.Line}
	}
	return e
}

// failReplicas records a GetReplicas error: scheduling cannot run, the
// previous placement stays (as after any scheduling error but "no cluster
// fits") and each of its clusters keeps its recorded copy.
func failReplicas(b *Binding, err error) {
	b.ScheduleError, b.ScriptFailed = err.Error(), true
	for _, t := range b.Targets {
		t.Failure = interpretFailure(b, t.Cluster, err)
		t.Error = err.Error()
	}
}

// customDependencies runs the GetDependencies scripts of obj's kind; ok is
// false when it has none (the built-in rules decide). Dependencies named
// by a label selector are not followed (see README).
func customDependencies(obj *unstructured.Unstructured, ip *interpret.Interpreter) (keys []workv1alpha1.ObjectKey, ok bool, err error) {
	deps, scripts, err := ip.InterpretDependency(obj)
	if len(scripts) == 0 {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	for _, d := range deps {
		if d.Name == "" {
			continue
		}
		gv, perr := schema.ParseGroupVersion(d.APIVersion)
		if perr != nil {
			return nil, true, fmt.Errorf("%s: dependency %s %q: %w", scripts[0].Location(), d.Kind, d.Name, perr)
		}
		ns := d.Namespace
		if ns == "" {
			ns = obj.GetNamespace()
		}
		keys = append(keys, workv1alpha1.ObjectKey{Group: gv.Group, Kind: d.Kind, Namespace: ns, Name: d.Name})
	}
	return keys, true, nil
}

// lintCustomizations runs the template-side scripts (GetReplicas,
// ReviseReplica with the template's own replicas, GetDependencies) on the
// templates no policy places, so that `lint` finds a script that fails on
// a template before a policy selects it (render has run them on the
// others). Scripts that read a member's copy (status, health, retention)
// need one and are not run.
func lintCustomizations(set *load.Set, res *Result) []Finding {
	ip := set.Interpreter()
	placed := map[workv1alpha1.ObjectKey]bool{}
	for _, b := range res.Bindings {
		placed[b.Key] = b.Choice.Winner != nil
	}
	var out []Finding
	for _, t := range set.Templates {
		if placed[workv1alpha1.KeyOf(t.Object)] {
			continue
		}
		add := func(err error) {
			if err != nil {
				out = append(out, Finding{Severity: SeverityError, Finding: load.Finding{Source: t.Source,
					Message: fmt.Sprintf("%s: %v", workv1alpha1.KeyOf(t.Object).Display(), err)}})
			}
		}
		n, _, s, err := ip.InterpretReplica(t.Object)
		add(err)
		if s != nil && err == nil {
			_, _, err := ip.ReviseReplica(t.Object, n)
			add(err)
		}
		_, _, err = customDependencies(t.Object, ip)
		add(err)
	}
	return out
}
