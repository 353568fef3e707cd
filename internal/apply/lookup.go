package apply

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/parallel"
)

// listThreshold is the number of objects of one kind in one namespace from
// which one LIST replaces a GET per object. listPage bounds a LIST page.
const (
	listThreshold = 4
	listPage      = 500
)

// groupKey is one kind and version in one namespace.
type groupKey struct {
	gvk       schema.GroupVersionKind
	namespace string
}

// group is the pending items of one groupKey.
type group struct {
	groupKey
	items []*item
}

// readLive fills the live copy of every pending item with as few requests
// as it can: nothing for an object in a namespace this call created (it
// cannot exist yet), one LIST for listThreshold or more objects of one kind
// in one namespace, one GET for each other object.
func (m *Manager) readLive(ctx context.Context, items []*item, created map[string]bool) {
	byGroup := map[groupKey][]*item{}
	var order []groupKey
	for _, it := range items {
		if it.done {
			continue
		}
		if created[it.ref.Namespace] && m.namespaced(it.obj) {
			it.read = true
			continue
		}
		k := groupKey{gvk: it.obj.GroupVersionKind(), namespace: it.ref.Namespace}
		if _, ok := byGroup[k]; !ok {
			order = append(order, k)
		}
		byGroup[k] = append(byGroup[k], it)
	}
	var tasks []func()
	for _, k := range order {
		g := group{groupKey: k, items: byGroup[k]}
		if len(g.items) >= listThreshold {
			tasks = append(tasks, func() { m.readGroup(ctx, g) })
			continue
		}
		for _, it := range g.items {
			tasks = append(tasks, func() { m.readOne(ctx, it) })
		}
	}
	parallel.Limited(ctx, len(tasks), m.opts.Concurrency, func(i int) { tasks[i]() })
}

// readGroup lists the objects of g and matches them to its items. If the
// LIST fails (e.g. RBAC allows get but not list), each item is read alone.
func (m *Manager) readGroup(ctx context.Context, g group) {
	found, err := m.list(ctx, g.gvk, g.namespace)
	for _, it := range g.items {
		if err != nil {
			m.readOne(ctx, it)
			continue
		}
		it.read = true
		// A cluster-scoped object has no namespace, even if desired names one.
		if live := found[it.ref.Name]; live != nil && (live.GetNamespace() == it.ref.Namespace || live.GetNamespace() == "") {
			it.live = live
		}
	}
}

// readOne reads the live copy of one item.
func (m *Manager) readOne(ctx context.Context, it *item) {
	it.live, it.liveErr = m.get(ctx, it.obj)
	it.read = true
}

// list returns the objects of one kind in one namespace (all namespaces
// for a cluster-scoped kind) by name.
func (m *Manager) list(ctx context.Context, gvk schema.GroupVersionKind, ns string) (map[string]*unstructured.Unstructured, error) {
	found := map[string]*unstructured.Unstructured{}
	opts := []client.ListOption{client.InNamespace(ns), client.Limit(listPage)}
	for {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := m.client.List(ctx, list, opts...); err != nil {
			return nil, err
		}
		for i := range list.Items {
			found[list.Items[i].GetName()] = &list.Items[i]
		}
		if list.GetContinue() == "" {
			return found, nil
		}
		opts = []client.ListOption{client.InNamespace(ns), client.Limit(listPage), client.Continue(list.GetContinue())}
	}
}

// get reads the live copy of obj; nil, nil when it does not exist.
func (m *Manager) get(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := m.client.Get(ctx, client.ObjectKeyFromObject(obj), live)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return live, nil
}
