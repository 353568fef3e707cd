package load

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/propagit/propagit/internal/api/clusterv1alpha1"
	"github.com/propagit/propagit/internal/api/configv1alpha1"
	"github.com/propagit/propagit/internal/api/policyv1alpha1"
	"github.com/propagit/propagit/internal/api/rolloutv1alpha1"
)

// collector gathers the objects and problems of one Load, in file order.
type collector struct {
	set      Set
	problems []Problem
	// budget, when set, bounds the documents and nodes parsed.
	budget *budget
	// kustomized: the documents are kustomize's output, not files.
	kustomized bool
}

func (c *collector) addIssues(src Source, issues []issue) {
	for _, i := range issues {
		p := Problem{Source: src, Field: i.field, Message: i.msg}
		if i.line > 0 {
			p.Source.Line = i.line
		}
		c.problems = append(c.problems, p)
	}
}

// file parses one YAML stream and classifies its documents.
func (c *collector) file(path string, data []byte) {
	if f, ok := helmFileFinding(path, data); ok && !c.kustomized {
		c.set.Findings = append(c.set.Findings, f)
		return
	}
	docs, errLine, errMsg := splitDocumentsMax(data, c.budget.documentsLeft())
	if errMsg == "" && notObjects(docs) {
		c.set.Findings = append(c.set.Findings, notObjectsFinding(path, docs))
		return
	}
	markers := endMarkerLines(data)
	for i, d := range docs {
		z := c.budget.normalizer()
		n := z.normalize(d, nil)
		if !c.budget.charge(Source{Path: path, Line: d.Line}, z) {
			return
		}
		next := math.MaxInt
		if i+1 < len(docs) {
			next = docs[i+1].Line
		}
		di := docInfo{src: Source{Path: path, Line: d.Line}, excerpt: endMarked(markers, d.Line, next) || hasEllipsis(d)}
		c.addIssues(di.src, z.issues)
		if n != nil {
			c.document(di, n, true)
		}
	}
	if errMsg != "" {
		c.problems = append(c.problems, Problem{Source: Source{Path: path, Line: errLine}, Message: errMsg})
	}
}

// document classifies one normalized document. Lists (kind *List with
// items) are expanded when allowList is set.
func (c *collector) document(di docInfo, n *yaml.Node, allowList bool) {
	src := di.src
	if n.Kind != yaml.MappingNode {
		c.problems = append(c.problems, problemf(src, "", "expected a Kubernetes object (a mapping with apiVersion and kind), got %s", got(n)))
		return
	}
	apiVersion, kind, ok := c.typeMeta(src, n)
	if !ok {
		return
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		c.problems = append(c.problems, problemf(src, "apiVersion", "%q is not a valid apiVersion", apiVersion))
		return
	}
	gvk := gv.WithKind(kind)
	switch {
	case allowList && strings.HasSuffix(kind, "List") && lookup(n, "items") != nil && lookup(n, "items").Kind == yaml.SequenceNode:
		for _, item := range lookup(n, "items").Content {
			c.document(docInfo{src: Source{Path: src.Path, Line: item.Line}, excerpt: di.excerpt}, item, false)
		}
	case gvk.Group == "cluster.karmada.io" && gvk.Version == "v1alpha1" && kind == clusterv1alpha1.KindCluster:
		c.cluster(di, n)
	case gvk.Group == "policy.karmada.io" && gvk.Version == "v1alpha1" && isPropagationKind(kind):
		c.propagation(di, n, kind == policyv1alpha1.KindClusterPropagationPolicy)
	case gvk.Group == "policy.karmada.io" && gvk.Version == "v1alpha1" && isOverrideKind(kind):
		c.override(di, n, kind == policyv1alpha1.KindClusterOverridePolicy)
	case gvk.GroupVersion().String() == configv1alpha1.GroupVersion && kind == configv1alpha1.KindResourceInterpreterCustomization:
		c.customization(di, n)
	case gvk.Group == "policy.karmada.io" && gvk.Version == "v1alpha1" && kind == policyv1alpha1.KindClusterTaintPolicy:
		c.taintPolicy(di, n)
	case rolloutv1alpha1.IsRolloutPolicy(apiVersion, kind):
		c.rolloutPolicy(di, n)
	case isKarmadaGroup(gvk.Group):
		c.unsupported(src, n, gvk)
	default:
		c.template(di, n, gvk)
	}
}

// typeMeta reads apiVersion and kind, both required strings.
func (c *collector) typeMeta(src Source, n *yaml.Node) (apiVersion, kind string, ok bool) {
	var missing []string
	ok = true
	read := func(key string) string {
		v := lookup(n, key)
		switch {
		case v == nil || isNull(v) || (v.Kind == yaml.ScalarNode && v.Value == ""):
			missing = append(missing, key)
			return ""
		case v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str":
			c.problems = append(c.problems, problemf(Source{Path: src.Path, Line: v.Line}, key, "expected a string, got %s", got(v)))
			ok = false
		}
		return v.Value
	}
	apiVersion, kind = read("apiVersion"), read("kind")
	if len(missing) > 0 {
		c.problems = append(c.problems, problemf(src, "", "not a Kubernetes object: %s required", strings.Join(missing, " and ")))
		ok = false
	}
	return apiVersion, kind, ok
}

// lookup returns the value of key in a mapping node, or nil.
func lookup(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func isPropagationKind(kind string) bool {
	return kind == policyv1alpha1.KindPropagationPolicy || kind == policyv1alpha1.KindClusterPropagationPolicy
}

func isOverrideKind(kind string) bool {
	return kind == policyv1alpha1.KindOverridePolicy || kind == policyv1alpha1.KindClusterOverridePolicy
}

// isKarmadaGroup reports whether group belongs to Karmada: karmada.io or
// any *.karmada.io.
func isKarmadaGroup(group string) bool {
	return group == "karmada.io" || strings.HasSuffix(group, ".karmada.io")
}

// unsupported records a Finding for a Karmada kind propagit does not
// implement; the object is not loaded.
func (c *collector) unsupported(src Source, n *yaml.Node, gvk schema.GroupVersionKind) {
	meta := func(field string) string {
		if v := lookup(lookup(n, "metadata"), field); v != nil && v.Kind == yaml.ScalarNode {
			return v.Value
		}
		return ""
	}
	what := describe(gvk.Group, gvk.Kind, meta("namespace"), meta("name"))
	msg := fmt.Sprintf("unsupported Karmada kind %s: propagit does not implement it; it is not propagated", what)
	if (gvk.Group == "policy.karmada.io" && (isPropagationKind(gvk.Kind) || isOverrideKind(gvk.Kind))) ||
		(gvk.Group == "cluster.karmada.io" && gvk.Kind == clusterv1alpha1.KindCluster) {
		msg = fmt.Sprintf("unsupported Karmada kind %s at version %s: propagit reads %s/v1alpha1; it is not propagated",
			what, gvk.Version, gvk.Group)
	}
	c.set.Findings = append(c.set.Findings, Finding{Source: src, Message: msg})
}

// template loads an ordinary object. Its metadata is checked strictly (an
// unknown metadata field is a warning and is removed, as the API server
// would drop it); the rest is left to the member's API server. An object
// without a name cannot be applied anywhere: it is left out with a Finding.
func (c *collector) template(di docInfo, n *yaml.Node, gvk schema.GroupVersionKind) {
	d := decoded{lines: map[string]int{}}
	if meta := lookup(n, "metadata"); meta != nil {
		w := newStrictWalker()
		w.walk(meta, metaType, "metadata")
		d = decoded{lines: w.lines, strict: w.issues}
	}
	v, _ := valueOf(n, nil, &d.strict, nil).(map[string]any)
	obj := &unstructured.Unstructured{Object: v}
	reserved := reservedIssues(obj)
	if !c.sealed(di, n, gvk, obj) {
		return
	}
	for _, f := range []string{"apiVersion", "kind"} {
		d.lines[f] = lookup(n, f).Line
	}
	var semantic []issue
	if obj.GetName() == "" {
		semantic = append(semantic, issue{field: "metadata.name", msg: "required: an object without a name cannot be applied", sev: sevSkip})
	}
	semantic = append(semantic, identityIssues(gvk, obj.GetName(), obj.GetNamespace())...)
	semantic = append(semantic, reserved...)
	if !c.apply(d.judge(di.src, semantic, di.excerpt, describe(gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName()))) {
		return
	}
	for _, i := range d.strict {
		if i.sev == sevWarning {
			deleteField(obj.Object, i.field)
		}
	}
	c.set.Findings = append(c.set.Findings, builtinFieldFindings(di.src, n, gvk, obj.GetNamespace(), obj.GetName())...)
	c.set.Templates = append(c.set.Templates, Template{Object: obj, Source: di.src})
}

// deleteField removes the field at a path such as "metadata.a[0].b".
func deleteField(obj map[string]any, path string) {
	var cur any = obj
	steps := strings.Split(path, ".")
	for i, step := range steps {
		name, rest, _ := strings.Cut(step, "[")
		m, ok := cur.(map[string]any)
		if !ok {
			return
		}
		if i == len(steps)-1 && rest == "" {
			delete(m, name)
			return
		}
		cur = m[name]
		if rest == "" {
			continue
		}
		for _, idx := range strings.Split(rest, "[") {
			k, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			l, ok := cur.([]any)
			if idx == "" || err != nil || !ok || k < 0 || k >= len(l) {
				return
			}
			cur = l[k]
		}
	}
}

// policyMeta defaults and checks a policy's name and namespace: namespaced
// kinds default to "default", cluster-scoped kinds keep none.
func policyMeta(meta *metav1.ObjectMeta, clusterScoped bool) []issue {
	c := &checker{}
	if c.required("metadata.name", meta.Name) {
		c.messages("metadata.name", meta.Name, content.IsDNS1123Subdomain(meta.Name))
	}
	switch {
	case clusterScoped:
		meta.Namespace = ""
	case meta.Namespace == "":
		meta.Namespace = metav1.NamespaceDefault
	default:
		c.messages("metadata.namespace", meta.Namespace, content.IsDNS1123Label(meta.Namespace))
	}
	return c.issues
}
