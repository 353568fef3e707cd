package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"sigs.k8s.io/yaml"
)

// Capabilities is what a chart learns of the cluster it renders for
// (.Capabilities): the cluster's Kubernetes version ("v1.31.2") and the
// API versions it serves ("apps/v1", "monitoring.coreos.com/v1/ServiceMonitor").
// Empty fields are Helm's defaults, as in `helm template`; a non-empty
// APIVersions replaces Helm's built-in list, as discovery does for `helm
// install`.
type Capabilities struct {
	KubeVersion string   `json:"kubeVersion,omitempty"`
	APIVersions []string `json:"apiVersions,omitempty"`
}

// Release is what a chart is rendered with besides its files.
type Release struct {
	Name      string         `json:"name"`
	Namespace string         `json:"namespace"`
	Values    map[string]any `json:"values,omitempty"`
	// Capabilities are the target cluster's.
	Capabilities Capabilities `json:"capabilities"`
}

// Object is one object a chart rendered.
type Object struct {
	// Template is the chart file that produced it ("web/templates/deployment.yaml",
	// "web/crds/crontab.yaml"), subcharts included ("web/charts/db/templates/...").
	Template string         `json:"template"`
	Object   map[string]any `json:"object"`
}

// Hook is an object of a Helm hook (helm.sh/hook): propagit does not run
// Helm's hook phases.
type Hook struct {
	Template string   `json:"template"`
	Kind     string   `json:"kind"`
	Name     string   `json:"name"`
	Events   []string `json:"events"`
}

// Test reports whether the hook runs only under `helm test`.
func (h Hook) Test() bool {
	for _, e := range h.Events {
		if e != string(releasev1.HookTest) && e != "test-success" {
			return false
		}
	}
	return len(h.Events) > 0
}

// Output is what one render gives.
type Output struct {
	// CRDs are the chart's crds/ files (and its subcharts'), not templated.
	CRDs []Object `json:"crds,omitempty"`
	// Objects are the rendered templates' objects in Helm's install order.
	Objects []Object `json:"objects,omitempty"`
	Hooks   []Hook   `json:"hooks,omitempty"`
}

// Error is a chart that failed to render: the template file and line
// when Helm names them.
type Error struct {
	Chart    string `json:"chart"`
	Template string `json:"template,omitempty"`
	Line     int    `json:"line,omitempty"`
	Message  string `json:"message"`
}

func (e *Error) Error() string {
	where := e.Chart
	if e.Template != "" {
		where = e.Template
		if e.Line > 0 {
			where += ":" + strconv.Itoa(e.Line)
		}
	}
	return where + ": " + e.Message
}

// Render renders chart for rel in this process. Callers that render a
// chart they do not trust use a Renderer (its worker process bounds
// memory and time); Render itself bounds only its output.
func Render(ctx context.Context, c *Chart, rel Release, lim Limits) (*Output, error) {
	hc, err := c.load()
	if err != nil {
		return nil, &Error{Chart: c.Name, Message: err.Error()}
	}
	fail := func(format string, a ...any) (*Output, error) {
		return nil, &Error{Chart: hc.Name(), Message: fmt.Sprintf(format, a...)}
	}
	caps := common.DefaultCapabilities.Copy()
	if rel.Capabilities.KubeVersion != "" {
		kv, err := common.ParseKubeVersion(rel.Capabilities.KubeVersion)
		if err != nil {
			return fail("cluster's Kubernetes version %q: %v", rel.Capabilities.KubeVersion, err)
		}
		caps.KubeVersion = *kv
	}
	if len(rel.Capabilities.APIVersions) > 0 {
		// What the cluster serves, as `helm install` reads it from
		// discovery; Helm's built-in list only for a cluster never heard of.
		caps.APIVersions = slices.Clone(rel.Capabilities.APIVersions)
	}
	if hc.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(hc.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return fail("chart requires kubeVersion %s, which is incompatible with the cluster's Kubernetes %s", hc.Metadata.KubeVersion, caps.KubeVersion.Version)
	}
	vals, err := normalValues(rel.Values)
	if err != nil {
		return fail("values: %v", err)
	}
	if err := chartutil.ProcessDependencies(hc, vals); err != nil {
		return fail("dependencies: %v", err)
	}
	opts := common.ReleaseOptions{Name: rel.Name, Namespace: rel.Namespace, Revision: 1, IsInstall: true}
	// Helm's own schema check loads $refs from files and URLs: a chart
	// could read the renderer's files or reach the network through it.
	// It is skipped; validateSchemas checks with no loader at all.
	top, err := util.ToRenderValuesWithSchemaValidation(hc, vals, opts, caps, true)
	if err != nil {
		return fail("values: %v", err)
	}
	if err := validateSchemas(hc, top); err != nil {
		return fail("values do not match the chart's values.schema.json: %v", err)
	}
	eng := engine.Engine{CustomTemplateFuncs: sandboxFuncs()}
	files, err := eng.RenderWithContext(ctx, hc, top)
	if err != nil {
		return nil, templateError(hc.Name(), err)
	}
	var size int64
	for name, text := range files {
		size += int64(len(text))
		if strings.HasSuffix(name, "NOTES.txt") || strings.TrimSpace(text) == "" || path.Base(name)[0] == '_' {
			delete(files, name)
		}
	}
	if size > lim.MaxOutput {
		return fail("rendered %d bytes, over the limit of %d", size, lim.MaxOutput)
	}
	hooks, manifests, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		// Helm names the file: "YAML parse error on web/templates/x.yaml: why".
		if rest, ok := strings.CutPrefix(err.Error(), "YAML parse error on "); ok {
			if name, why, ok := strings.Cut(rest, ": "); ok {
				return nil, &Error{Chart: hc.Name(), Template: name, Message: "rendered YAML is invalid: " + why}
			}
		}
		return fail("%v", err)
	}
	out := &Output{}
	for _, crd := range hc.CRDObjects() {
		objs, err := decodeAll(crd.Filename, string(crd.File.Data))
		if err != nil {
			return nil, &Error{Chart: hc.Name(), Template: crd.Filename, Message: err.Error()}
		}
		out.CRDs = append(out.CRDs, objs...)
	}
	for _, m := range manifests {
		objs, err := decodeAll(m.Name, m.Content)
		if err != nil {
			return nil, &Error{Chart: hc.Name(), Template: m.Name, Message: err.Error()}
		}
		out.Objects = append(out.Objects, objs...)
	}
	for _, h := range hooks {
		events := make([]string, len(h.Events))
		for i, e := range h.Events {
			events[i] = string(e)
		}
		out.Hooks = append(out.Hooks, Hook{Template: h.Path, Kind: h.Kind, Name: h.Name, Events: events})
	}
	return out, nil
}

// normalValues returns values as Helm reads a values file: through
// JSON, numbers as float64, so that a chart prints them as `helm
// template` would.
func normalValues(v map[string]any) (map[string]any, error) {
	out := map[string]any{}
	if len(v) == 0 {
		return out, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return out, json.Unmarshal(data, &out)
}

// decodeAll reads the YAML documents of one rendered file.
func decodeAll(name, text string) ([]Object, error) {
	var out []Object
	for doc := range strings.SplitSeq(text, "\n---") {
		doc = strings.TrimPrefix(doc, "---")
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, fmt.Errorf("rendered YAML is invalid: %v", err)
		}
		if len(obj) == 0 {
			continue
		}
		if _, ok := obj["kind"].(string); !ok {
			return nil, errors.New("rendered a document that is not a Kubernetes object: kind required")
		}
		out = append(out, Object{Template: name, Object: obj})
	}
	return out, nil
}

// sandboxFuncs replaces the template functions that reach outside the
// chart: Helm already drops env and expandenv and answers lookup and
// getHostByName with nothing; these make sure of it whatever Helm's
// defaults become.
func sandboxFuncs() template.FuncMap {
	return template.FuncMap{
		"lookup":        func(string, string, string, string) (map[string]any, error) { return map[string]any{}, nil },
		"getHostByName": func(string) string { return "" },
		"env": func(string) (string, error) {
			return "", errors.New("env is not available in propagit's Helm renderer")
		},
		"expandenv": func(string) (string, error) {
			return "", errors.New("expandenv is not available in propagit's Helm renderer")
		},
	}
}

// helmErrorAt finds a file and line in the Helm engine's messages, which
// come as "execution error at (web/templates/x.yaml:14:12): message",
// "parse error at (web/templates/x.yaml:3): message", or a trace of
// "template: web/templates/x.yaml:14:12" lines ending with the message.
var helmErrorAt = regexp.MustCompile(`([A-Za-z0-9_.\-/]+/templates/[A-Za-z0-9_.\-/]+):(\d+)(?::\d+)?`)

// templateError makes an *Error of the engine's error, naming the
// template and line of the innermost place Helm names.
func templateError(chart string, err error) *Error {
	msg := strings.TrimSpace(err.Error())
	e := &Error{Chart: chart, Message: msg}
	all := helmErrorAt.FindAllStringSubmatchIndex(msg, -1)
	if len(all) == 0 {
		return e
	}
	m := all[len(all)-1]
	e.Template = msg[m[2]:m[3]]
	e.Line, _ = strconv.Atoi(msg[m[4]:m[5]])
	switch {
	case strings.HasPrefix(msg, "execution error at ("), strings.HasPrefix(msg, "parse error at ("):
		if _, rest, ok := strings.Cut(msg, "): "); ok {
			e.Message = rest
		}
	default:
		lines := strings.Split(msg, "\n")
		e.Message = strings.TrimSpace(lines[len(lines)-1])
		// A template function's own error comes as text/template wrote
		// it, once per include: `template: web/templates/x.yaml:6:11:
		// executing "web/templates/x.yaml" at <env "HOME">: error calling
		// env: message`.
		for strings.HasPrefix(e.Message, "template: ") {
			_, rest, ok := strings.Cut(e.Message, ": error calling ")
			if !ok {
				break
			}
			if _, rest, ok = strings.Cut(rest, ": "); !ok {
				break
			}
			e.Message = rest
		}
	}
	return e
}
