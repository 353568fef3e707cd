package load

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func TestCacheParsesOnlyChangedFiles(t *testing.T) {
	fs := filesys.MakeFsInMemory()
	write := func(name, content string) {
		t.Helper()
		if err := fs.WriteFile("/repo/"+name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	cm := func(name, value string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {k: %q}\n", name, value)
	}
	for i := range 5 {
		write(fmt.Sprintf("cm%d.yaml", i), cm(fmt.Sprintf("cm%d", i), "1"))
	}
	cache := NewCache()
	check := func(wantParsed int) *Set {
		t.Helper()
		got, err := cache.Load(fs, "/repo")
		if err != nil {
			t.Fatal(err)
		}
		want, err := Load(fs, "/repo")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Template{}, "Digest")); diff != "" {
			t.Fatalf("cached load differs from a fresh load (-fresh +cached):\n%s", diff)
		}
		if cache.Parsed != wantParsed {
			t.Fatalf("parsed %d files, want %d", cache.Parsed, wantParsed)
		}
		return got
	}
	set := check(5)
	digests := map[string][32]byte{}
	for _, tm := range set.Templates {
		if tm.Digest == ([32]byte{}) {
			t.Fatalf("%s has no digest", tm.Source)
		}
		digests[tm.Object.GetName()] = tm.Digest
	}
	// The namespace depends on the whole set: a CRD making Widget
	// cluster-scoped clears it, and removing the CRD brings it back, so
	// the loader must not change the cached object.
	write("widget.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: team-a}\n")
	check(1)
	write("crd.yaml", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n"+
		"spec: {group: example.com, scope: Cluster, names: {kind: Widget, plural: widgets}, versions: [{name: v1, served: true, storage: true}]}\n")
	if ns := widgetNamespace(check(1)); ns != "" {
		t.Fatalf("cluster-scoped Widget has namespace %q", ns)
	}
	if err := fs.RemoveAll("/repo/crd.yaml"); err != nil {
		t.Fatal(err)
	}
	if ns := widgetNamespace(check(0)); ns != "team-a" {
		t.Fatalf("Widget without its CRD has namespace %q, want team-a as written", ns)
	}
	if err := fs.RemoveAll("/repo/widget.yaml"); err != nil {
		t.Fatal(err)
	}
	check(0)

	write("cm3.yaml", cm("cm3", "2"))
	if err := fs.RemoveAll("/repo/cm4.yaml"); err != nil {
		t.Fatal(err)
	}
	set = check(1)
	for _, tm := range set.Templates {
		same := digests[tm.Object.GetName()] == tm.Digest
		if changed := tm.Object.GetName() == "cm3"; same == changed {
			t.Errorf("%s: digest unchanged = %v, want %v", tm.Object.GetName(), same, !changed)
		}
	}

	write("cm3.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [}\n")
	if _, err := cache.Load(fs, "/repo"); err == nil {
		t.Fatal("a broken file loaded from the cache without an error")
	}
	write("cm3.yaml", cm("cm3", "2"))
	check(1)
}

func widgetNamespace(set *Set) string {
	for _, t := range set.Templates {
		if t.Object.GetKind() == "Widget" {
			return t.Object.GetNamespace()
		}
	}
	return "<no Widget>"
}

// TestCacheHandsOutTheSameObjectsAndLists loads revisions through a Cache
// and checks what stays the very same: the object of an unchanged
// template, also one the loader gave the default namespace, and the
// policy and cluster lists while no policy or cluster changed. A renderer
// keeps what it worked out by those pointers.
func TestCacheHandsOutTheSameObjectsAndLists(t *testing.T) {
	fs := filesys.MakeFsInMemory()
	write := func(name, content string) {
		t.Helper()
		if err := fs.WriteFile("/repo/"+name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {k: v}\n") // no namespace: "default"
	write("other.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: team}\ndata: {k: v}\n")
	policy := "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p, namespace: default}\n" +
		"spec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]\n  placement: {clusterAffinity: {clusterNames: [%s]}}\n"
	write("policy.yaml", fmt.Sprintf(policy, "m1"))
	write("cluster.yaml", "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\nspec: {syncMode: Push}\n")
	cache := NewCache()
	load := func() *Set {
		t.Helper()
		set, err := cache.Load(fs, "/repo")
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	objects := func(set *Set) map[string]*Template {
		out := map[string]*Template{}
		for i := range set.Templates {
			out[set.Templates[i].Object.GetName()] = &set.Templates[i]
		}
		return out
	}
	first := load()
	if ns := objects(first)["plain"].Object.GetNamespace(); ns != "default" {
		t.Fatalf("namespace %q, want default", ns)
	}
	second := load()
	for name, tm := range objects(second) {
		if tm.Object != objects(first)[name].Object {
			t.Errorf("%s: unchanged, yet a new object", name)
		}
	}
	if &second.Propagations[0] != &first.Propagations[0] || &second.Clusters[0] != &first.Clusters[0] {
		t.Error("no policy or cluster changed, yet new lists")
	}

	write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {k: changed}\n")
	third := load()
	if objects(third)["plain"].Object == objects(second)["plain"].Object || objects(third)["other"].Object != objects(second)["other"].Object {
		t.Error("want a new object for the changed template only")
	}
	if &third.Propagations[0] != &first.Propagations[0] {
		t.Error("no policy changed, yet a new Propagations list")
	}

	write("policy.yaml", fmt.Sprintf(policy, "m1, m2"))
	fourth := load()
	if &fourth.Propagations[0] == &third.Propagations[0] {
		t.Fatal("the policy changed, yet the last Propagations list")
	}
	if got := fourth.Propagations[0].Policy.Spec.Placement.ClusterAffinity.ClusterNames; len(got) != 2 {
		t.Errorf("clusterNames %v, want the new policy's", got)
	}
	if &fourth.Clusters[0] != &first.Clusters[0] {
		t.Error("no cluster changed, yet a new Clusters list")
	}
}
