package apply

import (
	"context"
	"fmt"
	"sort"

	"github.com/fluxcd/pkg/ssa/utils"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/propagit/propagit/internal/parallel"
)

var namespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

// ensureNamespaces creates every namespace that a desired namespaced object
// lives in and that is neither desired itself nor on the member. Such a
// namespace gets no managed label: propagit did not render it, so it is never
// pruned. The items of a namespace that could not be read or created fail at
// once. It returns the names of the namespaces it created, sorted.
func (m *Manager) ensureNamespaces(ctx context.Context, p *plan) []string {
	byNS := m.itemsByMissingNamespace(p)
	names := make([]string, 0, len(byNS))
	for ns := range byNS {
		names = append(names, ns)
	}
	sort.Strings(names)
	existing := m.existingNamespaces(ctx, len(names))
	created := make([]bool, len(names))
	errs := make([]error, len(names))
	parallel.Limited(ctx, len(names), m.opts.Concurrency, func(i int) {
		switch {
		case existing == nil:
			created[i], errs[i] = m.ensureNamespace(ctx, names[i])
		case !existing[names[i]]:
			created[i], errs[i] = m.createNamespace(ctx, names[i])
		}
	})
	var out []string
	for i, ns := range names {
		if created[i] {
			out = append(out, ns)
		}
		if errs[i] == nil {
			continue
		}
		for _, it := range byNS[ns] {
			it.failMsg(fmt.Sprintf("%s was not applied: %v", fmtRef(it.ref), errs[i]))
		}
	}
	return out
}

// itemsByMissingNamespace groups the pending items of namespaced kinds by
// namespace, leaving out namespaces the plan itself applies.
func (m *Manager) itemsByMissingNamespace(p *plan) map[string][]*item {
	desired := map[string]bool{}
	for _, it := range p.items {
		if !it.done && utils.IsNamespace(it.obj) {
			desired[it.obj.GetName()] = true
		}
	}
	byNS := map[string][]*item{}
	for _, it := range p.items {
		ns := it.obj.GetNamespace()
		if it.done || ns == "" || desired[ns] || !m.namespaced(it.obj) {
			continue
		}
		byNS[ns] = append(byNS[ns], it)
	}
	return byNS
}

// namespaced reports whether obj's kind is namespaced. A kind the member
// does not serve yet (a custom resource whose CRD is applied in this call)
// counts as namespaced, since it names a namespace.
func (m *Manager) namespaced(obj *unstructured.Unstructured) bool {
	ok, err := m.client.IsObjectNamespaced(obj)
	return ok || err != nil
}

// existingNamespaces lists the namespaces on the member when n of them are
// to be checked and n reaches listThreshold, so one LIST replaces n GETs. It
// returns nil when it did not list, or the LIST failed (each namespace is
// then read alone).
func (m *Manager) existingNamespaces(ctx context.Context, n int) map[string]bool {
	if n < listThreshold {
		return nil
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(namespaceGVK.GroupVersion().WithKind("NamespaceList"))
	if err := m.client.List(ctx, list); err != nil {
		return nil
	}
	existing := make(map[string]bool, len(list.Items))
	for _, ns := range list.Items {
		existing[ns.Name] = true
	}
	return existing
}

// ensureNamespace creates the namespace name unless it exists, and reports
// whether it created it.
func (m *Manager) ensureNamespace(ctx context.Context, name string) (bool, error) {
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(namespaceGVK)
	err := m.client.Get(ctx, client.ObjectKey{Name: name}, live)
	if err == nil {
		return false, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("failed to read namespace %s: %w", name, err)
	}
	return m.createNamespace(ctx, name)
}

// createNamespace creates the namespace name, and reports whether it did (it
// did not if someone else just created it).
func (m *Manager) createNamespace(ctx context.Context, name string) (bool, error) {
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(namespaceGVK)
	ns.SetName(name)
	err := m.client.Create(ctx, ns, client.FieldOwner(m.opts.FieldManager))
	switch {
	case apierrors.IsAlreadyExists(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("failed to create namespace %s: %w", name, err)
	}
	return true, nil
}
