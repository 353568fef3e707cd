package diff

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

func deployment(name string, replicas int64, image string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "demo",
			"annotations": map[string]any{workv1alpha1.AnnotationTemplate: "Deployment.apps/demo/" + name}},
		"spec": map[string]any{"replicas": replicas, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": name, "image": image}}}}},
	}}
}

func configMap(name, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "demo"},
		"data":     map[string]any{"value": value},
	}}
}

func secret(data map[string]any, applied string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "demo"},
		"data":     data,
	}}
	if applied != "" {
		obj.SetAnnotations(map[string]string{lastApplied: applied})
	}
	return obj
}

// result builds a render.Result from cluster → objects.
func result(works map[string][]*unstructured.Unstructured) *render.Result {
	r := &render.Result{}
	for _, name := range sortedKeys(works) {
		r.Works = append(r.Works, render.Work{Cluster: name, Objects: works[name]})
	}
	return r
}

func sortedKeys(m map[string][]*unstructured.Unstructured) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestCompare(t *testing.T) {
	base := result(map[string][]*unstructured.Unstructured{
		"a": {deployment("web", 3, "web:1"), deployment("worker", 2, "worker:1"), configMap("cfg", "x")},
		"b": {deployment("web", 3, "web:1"), configMap("cfg", "x")},
		"c": {configMap("cfg", "x")},
	})
	head := result(map[string][]*unstructured.Unstructured{
		"a": {deployment("web", 2, "web:1")},
		"b": {deployment("web", 4, "web:1"), deployment("worker", 2, "worker:1"), configMap("cfg", "x")},
		"c": {configMap("cfg", "x")},
	})
	r := Compare(Input{Base: base, Head: head, BaseRevision: Revision{Name: "main", Hash: "0123456789abcdef"}, HeadRevision: Revision{Name: ".", WorkingTree: true}})
	type row struct {
		Name                    string
		Added, Changed, Removed int
		Replicas                Replicas
	}
	var got []row
	for _, c := range r.Clusters {
		got = append(got, row{c.Name, c.Added, c.Changed, c.Removed, *c.Replicas})
	}
	want := []row{{"a", 0, 1, 2, Replicas{5, 2}}, {"b", 1, 1, 0, Replicas{3, 6}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("clusters (-want +got):\n%s", d)
	}
	worker := Ref{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "worker"}
	cfg := Ref{Group: "core", Kind: "ConfigMap", Namespace: "demo", Name: "cfg"}
	if d := cmp.Diff([]Move{{Ref: worker, From: "a", To: "b"}}, r.Moves); d != "" {
		t.Errorf("moves (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Deletion{{Ref: cfg, Clusters: []string{"a"}}}, r.Deletions); d != "" {
		t.Errorf("deletions (-want +got):\n%s", d)
	}
	if r.UnchangedClusters != 1 || !r.Differs {
		t.Errorf("unchanged = %d, differs = %v", r.UnchangedClusters, r.Differs)
	}
	// The moved object's diff is on the cluster it arrives on; it compares
	// with the object it left, so an identical worker shows none.
	for _, o := range r.Clusters[1].Objects {
		if o.Ref == worker && (o.MovedFrom != "a" || o.Diff != "") {
			t.Errorf("moved object = %+v", o)
		}
	}
	text := r.Text()
	for _, s := range []string{"propagit diff main (0123456) → working tree", "Deployment.apps/demo/worker moved from a to b", "+ Deployment.apps/demo/worker added (moved from a, identical)\n",
		"This change deletes ConfigMap/demo/cfg from 1 cluster: a.", "-  replicas: 3\n+  replicas: 2\n"} {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}
}

func TestCompareIgnoresNumericTypes(t *testing.T) {
	a, b := deployment("web", 3, "web:1"), deployment("web", 3, "web:1")
	_ = unstructured.SetNestedField(b.Object, float64(3), "spec", "replicas")
	r := Compare(Input{Base: result(map[string][]*unstructured.Unstructured{"a": {a}}), Head: result(map[string][]*unstructured.Unstructured{"a": {b}})})
	if r.Differs {
		t.Errorf("int64 3 and float64 3 render the same YAML, want no difference: %+v", r.Clusters)
	}
}

func TestSecretsAreRedacted(t *testing.T) {
	const raw1, raw2, kept, applied = "b2xkLXBhc3N3b3Jk", "bmV3LXBhc3N3b3Jk", "YWRtaW4=", `{"data":{"password":"b2xkLXBhc3N3b3Jk"}}`
	base := result(map[string][]*unstructured.Unstructured{
		"a": {secret(map[string]any{"password": raw1, "user": kept}, applied)},
		"b": {secret(map[string]any{"password": raw1, "user": kept}, "")},
	})
	head := result(map[string][]*unstructured.Unstructured{
		"a": {secret(map[string]any{"password": raw2, "user": kept}, applied+" ")},
		"c": {secret(map[string]any{"password": raw2, "user": kept, "extra": raw1}, "")},
	})
	r := Compare(Input{Base: base, Head: head})
	out := r.Text() + r.Markdown(MarkdownLimit)
	var sb strings.Builder
	if err := Write(&sb, r, JSON); err != nil {
		t.Fatal(err)
	}
	out += sb.String()
	for _, v := range []string{raw1, raw2, kept, applied, "PROPAGIT-REDACTED"} {
		if strings.Contains(out, v) {
			t.Errorf("output contains %q:\n%s", v, out)
		}
	}
	changed := r.Clusters[0].Objects[0].Diff
	for _, s := range []string{
		"-    kubectl.kubernetes.io/last-applied-configuration: <redacted: changed>\n",
		"+    kubectl.kubernetes.io/last-applied-configuration: <redacted: changed>\n",
		"-  password: <redacted: changed>\n+  password: <redacted: changed>\n",
		"   user: <redacted: unchanged>\n",
	} {
		if !strings.Contains(changed, s) {
			t.Errorf("changed Secret diff lacks %q:\n%s", s, changed)
		}
	}
	// The Secret moved from b to c: values compare across the move.
	moved := r.Clusters[2].Objects[0]
	if moved.MovedFrom != "b" || !strings.Contains(moved.Diff, "+  extra: <redacted: changed>\n") || !strings.Contains(moved.Diff, "   user: <redacted: unchanged>\n") {
		t.Errorf("moved Secret = %+v", moved)
	}
	// An added Secret with no counterpart shows <redacted>.
	r = Compare(Input{Base: result(nil), Head: base})
	if d := r.Clusters[0].Objects[0].Diff; !strings.Contains(d, "+  password: <redacted>\n") || strings.Contains(d, raw1) {
		t.Errorf("added Secret diff:\n%s", d)
	}
}

// bigReport has clusters whose ConfigMaps each change by size bytes, and
// one small cluster with a one-line change.
func bigReport(clusters, objects, size int) *Report {
	base, head := map[string][]*unstructured.Unstructured{}, map[string][]*unstructured.Unstructured{}
	for c := 0; c < clusters; c++ {
		name := fmt.Sprintf("member%02d", c)
		for o := 0; o < objects; o++ {
			base[name] = append(base[name], configMap(fmt.Sprintf("cfg%02d", o), strings.Repeat("a", size)))
			// Each cluster's change differs, so none are grouped.
			head[name] = append(head[name], configMap(fmt.Sprintf("cfg%02d", o), name+strings.Repeat("b", size)))
		}
	}
	base["small"] = []*unstructured.Unstructured{deployment("web", 1, "web:1")}
	head["small"] = []*unstructured.Unstructured{deployment("web", 1, "web:2")}
	return Compare(Input{Base: result(base), Head: result(head)})
}

func TestMarkdownTruncation(t *testing.T) {
	r := bigReport(12, 20, 1000)
	if n := len(r.Markdown(1 << 30)); n < 3*MarkdownLimit {
		t.Fatalf("untruncated markdown is %d bytes, want a case well over the limit", n)
	}
	md := r.Markdown(MarkdownLimit)
	if len(md) > MarkdownLimit {
		t.Errorf("markdown is %d bytes, over %d", len(md), MarkdownLimit)
	}
	if !strings.HasPrefix(md, Marker+"\n") {
		t.Error("the marker is not the first line")
	}
	for _, s := range []string{"This comment was truncated", "cut here", "(truncated)</summary>",
		"-      - image: web:1\n+      - image: web:2\n", "| `member11` | 0 | 20 | 0 | - |"} {
		if !strings.Contains(md, s) {
			t.Errorf("truncated markdown lacks %q", s)
		}
	}
	if strings.Count(md, "<details>") != strings.Count(md, "</details>") || strings.Count(md, "<details>") != 13 {
		t.Errorf("unbalanced or missing <details>: %d open, %d closed", strings.Count(md, "<details>"), strings.Count(md, "</details>"))
	}
	if strings.Count(md, "\n```")%2 != 0 {
		t.Error("a code fence is left open")
	}
}

func TestMarkdownHardCut(t *testing.T) {
	r := bigReport(1, 1, 10)
	for i := 0; i < 3000; i++ {
		name := fmt.Sprintf("member-%04d", i)
		r.Clusters = append(r.Clusters, Cluster{Name: name, Changed: 1,
			Objects: []Object{{Ref: Ref{Kind: "ConfigMap", Namespace: "demo", Name: name}, Change: Changed}}})
	}
	md := r.Markdown(MarkdownLimit)
	if len(md) > MarkdownLimit || !strings.HasSuffix(md, "Run `propagit diff` locally for the full output.\n") {
		t.Errorf("hard cut: %d bytes, ends with %q", len(md), md[max(0, len(md)-200):])
	}
	if strings.Count(md, "<details>") != strings.Count(md, "</details>") {
		t.Error("unbalanced <details>")
	}
}

func TestUnified(t *testing.T) {
	a := lines([]byte("a\nb\nc\nd\ne\nf\ng\nh\n"))
	b := lines([]byte("a\nb\nc\nD\ne\nf\ng\nh\ni"))
	want := "--- x\n+++ y\n@@ -1,8 +1,9 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n h\n+i\n"
	if got := unified(a, b, "x", "y"); got != want {
		t.Errorf("unified:\n%s\nwant:\n%s", got, want)
	}
	if got := unified(nil, lines([]byte("x\n")), "/dev/null", "y"); got != "--- /dev/null\n+++ y\n@@ -0,0 +1 @@\n+x\n" {
		t.Errorf("added: %q", got)
	}
}

func TestEqualJSON(t *testing.T) {
	obj := deployment("web", 3, "web:1").Object
	for _, tt := range []struct {
		a, b any
		want bool
	}{
		{obj, deployment("web", 3, "web:1").Object, true},
		{obj, deployment("web", 3, "web:2").Object, false},
		{obj, deployment("web", 4, "web:1").Object, false},
		{map[string]any{"a": nil}, map[string]any{"b": nil}, false},
		{[]any{"a", int64(1)}, []any{"a", int64(1)}, true},
		{[]any{"a"}, []any{"a", "b"}, false},
		{int64(1), float64(1), false},
		{nil, map[string]any{}, false},
		{[]string{"x"}, []string{"x"}, true},
	} {
		if got := equalJSON(tt.a, tt.b); got != tt.want {
			t.Errorf("equalJSON(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestWarnings(t *testing.T) {
	web := workv1alpha1.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "web"}
	head := result(map[string][]*unstructured.Unstructured{"a": {configMap("cfg", "x")}})
	head.Bindings = []*render.Binding{{
		Key:           web,
		Template:      &load.Template{Source: load.Source{Path: "apps/web.yaml", Line: 3}},
		ScheduleError: "no cluster fits",
		Targets:       []*render.Target{{Cluster: "b", Error: "override failed"}},
	}}
	r := Compare(Input{Base: head, Head: head, Root: "fleet"})
	want := []Warning{
		{Source: "fleet/apps/web.yaml:3", Template: "Deployment.apps/demo/web", Message: "scheduling failed: no cluster fits; it is placed nowhere"},
		{Source: "fleet/apps/web.yaml:3", Template: "Deployment.apps/demo/web", Cluster: "b", Message: "not rendered: override failed"},
	}
	if d := cmp.Diff(want, r.Warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	text, md := r.Text(), r.Markdown(MarkdownLimit)
	if !strings.Contains(text, "  fleet/apps/web.yaml:3: Deployment.apps/demo/web on b: not rendered: override failed\n") ||
		!strings.Contains(md, "- `fleet/apps/web.yaml:3`: `Deployment.apps/demo/web` on `b`: not rendered: override failed\n") {
		t.Errorf("warnings not shown:\n%s\n%s", text, md)
	}
}

// TestMarkdownGroupsIdenticalChanges: a one-line image bump on 1,000
// clusters is one change, shown once with its hunk and the clusters it
// touches, and fits one pull-request comment.
func TestMarkdownGroupsIdenticalChanges(t *testing.T) {
	base, head := map[string][]*unstructured.Unstructured{}, map[string][]*unstructured.Unstructured{}
	for c := range 1000 {
		name := fmt.Sprintf("c%04d", c)
		base[name] = []*unstructured.Unstructured{deployment("web", 2, "web:1")}
		head[name] = []*unstructured.Unstructured{deployment("web", 2, "web:2")}
	}
	base["odd"] = []*unstructured.Unstructured{deployment("web", 2, "web:1")}
	head["odd"] = []*unstructured.Unstructured{deployment("web", 2, "web:3")}
	r := Compare(Input{Base: result(base), Head: result(head)})
	md := r.Markdown(MarkdownLimit)
	if len(md) > MarkdownLimit || strings.Contains(md, "cut here") || strings.Contains(md, "truncated") {
		t.Fatalf("markdown is %d bytes or was cut:\n%s", len(md), md[:min(len(md), 2000)])
	}
	for _, s := range []string{"same change on 1000 clusters: `c0000`", "and 990 more", "-      - image: web:1\n+      - image: web:2\n",
		"-      - image: web:1\n+      - image: web:3\n", "| `odd` |"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
	if n := strings.Count(md, "image: web:2"); n != 1 {
		t.Errorf("the shared hunk appears %d times, want once", n)
	}
	if n := strings.Count(md, "<details>"); n != 2 {
		t.Errorf("%d sections, want 2 (the 1000 alike, and odd)", n)
	}
	txt := r.Text()
	if !strings.Contains(txt, "=== same change on 1000 clusters: c0000") || strings.Count(txt, "image: web:2") != 1 {
		t.Errorf("text output does not group the change:\n%s", txt[:min(len(txt), 2000)])
	}
}
