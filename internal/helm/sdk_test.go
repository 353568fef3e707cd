package helm

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"sigs.k8s.io/yaml"
)

// sdkCaps is one cluster as both renderers are told of it. Ours takes
// the full list of API versions (a non-empty list replaces Helm's
// built-in one); action.Install adds its list to the built-in one, so it
// is given only the extras.
type sdkCaps struct {
	name        string
	kubeVersion string
	ours        []string // Capabilities.APIVersions for our Render
	sdkExtra    []string // Install.APIVersions
}

func shopCapSets() []sdkCaps {
	builtin := slices.Clone(common.DefaultCapabilities.APIVersions)
	monitoring := []string{"monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor"}
	return []sdkCaps{
		{name: "default"},
		{name: "1.29-no-monitoring", kubeVersion: "v1.29.0"},
		{name: "1.33-monitoring", kubeVersion: "v1.33.1", ours: append(slices.Clone(builtin), monitoring...), sdkExtra: monitoring},
		{name: "1.33-builtin-listed", kubeVersion: "v1.33.1", ours: builtin},
	}
}

// shopValueSets are values files a shop's operators would write.
var shopValueSets = []struct {
	name, release, namespace, values string
}{
	{"tag-only", "shop", "shop-prod", `
image:
  tag: "2.1.0"
`},
	{"no-db-annotations", "storefront", "retail", `
replicaCount: 5
image:
  tag: 2.2.0-rc.1
  pullPolicy: Always
greeting: "{{ .Chart.Name }} {{ .Values.image.tag }} for {{ .Release.Name | upper }}"
podAnnotations:
  prometheus.io/scrape: "true"
  team: checkout
service:
  type: NodePort
  port: 9090
resources:
  requests:
    cpu: null
  limits:
    memory: 256Mi
db:
  enabled: false
externalDatabase:
  host: pg.retail.example.com
`},
	{"no-migrations-no-metrics", "shop-eu", "eu", `
image:
  repository: registry.example.com/shop/web-eu
  tag: "2.1.0"
metrics:
  enabled: false
migrations:
  enabled: false
db:
  storage: 5Gi
`},
}

// sdkInstall renders c as `helm template` does: action.Install in
// client-only dry-run mode.
func sdkInstall(t *testing.T, c *Chart, name, namespace string, vals map[string]any, caps sdkCaps) (*releasev1.Release, error) {
	t.Helper()
	hc, err := c.load()
	if err != nil {
		t.Fatal(err)
	}
	inst := action.NewInstall(action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler)))
	inst.DryRunStrategy = action.DryRunClient
	inst.Replace = true
	inst.IncludeCRDs = true
	inst.ReleaseName = name
	inst.Namespace = namespace
	if caps.kubeVersion != "" {
		kv, err := common.ParseKubeVersion(caps.kubeVersion)
		if err != nil {
			t.Fatal(err)
		}
		inst.KubeVersion = kv
	}
	inst.APIVersions = caps.sdkExtra
	r, err := inst.RunWithContext(context.Background(), hc, vals)
	if err != nil {
		return nil, err
	}
	rel, ok := r.(*releasev1.Release)
	if !ok {
		t.Fatalf("action.Install returned a %T", r)
	}
	return rel, nil
}

var (
	docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)
	sourceLine   = regexp.MustCompile(`(?m)^# Source: (.*)$`)
)

// manifestObjects reads the objects of a release's manifest, each with
// the template its "# Source:" comment names.
func manifestObjects(t *testing.T, manifest string) []Object {
	t.Helper()
	var out []Object
	for _, doc := range docSeparator.Split(manifest, -1) {
		src := ""
		if m := sourceLine.FindStringSubmatch(doc); m != nil {
			src = m[1]
		}
		doc = sourceLine.ReplaceAllString(doc, "")
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("the SDK's manifest (%s): %v\n%s", src, err, doc)
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, Object{Template: src, Object: obj})
	}
	return out
}

// TestHelmRendersAsHelmSDK renders the shop chart (a subchart under a
// condition, a library chart, CRDs, hooks, tpl, required, .Files,
// capability branches) with propagit's Render, in-process and in a
// worker, and with the Helm SDK's own action.Install in client-only
// dry-run (what `helm template --include-crds` runs), for several value
// sets and clusters: the objects must be equal, in the same order, from
// the same templates, and the hooks the same.
func TestHelmRendersAsHelmSDK(t *testing.T) {
	c := testChart(t, "shop")
	r := NewRenderer(DefaultLimits())
	for _, vs := range shopValueSets {
		for _, caps := range shopCapSets() {
			t.Run(vs.name+"/"+caps.name, func(t *testing.T) {
				rel := Release{Name: vs.release, Namespace: vs.namespace, Values: yamlValues(t, vs.values),
					Capabilities: Capabilities{KubeVersion: caps.kubeVersion, APIVersions: caps.ours}}
				ours, err := Render(context.Background(), c, rel, DefaultLimits())
				if err != nil {
					t.Fatal(err)
				}
				sdk, err := sdkInstall(t, c, vs.release, vs.namespace, yamlValues(t, vs.values), caps)
				if err != nil {
					t.Fatal(err)
				}
				want := manifestObjects(t, sdk.Manifest)
				got := append(slices.Clone(ours.CRDs), ours.Objects...)
				if d := cmp.Diff(want, got); d != "" {
					t.Fatalf("objects differ from the SDK's (-sdk +ours):\n%s", d)
				}
				var wantHooks []Hook
				for _, h := range sdk.Hooks {
					events := make([]string, len(h.Events))
					for i, e := range h.Events {
						events[i] = string(e)
					}
					wantHooks = append(wantHooks, Hook{Template: h.Path, Kind: h.Kind, Name: h.Name, Events: events})
				}
				if d := cmp.Diff(wantHooks, ours.Hooks); d != "" {
					t.Fatalf("hooks differ from the SDK's (-sdk +ours):\n%s", d)
				}
				inWorker, err := r.Render(c, rel)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(ours, inWorker); d != "" {
					t.Fatalf("the worker's render differs from the in-process one (-in-process +worker):\n%s", d)
				}
				checkShopBranches(t, vs.name, caps, ours)
			})
		}
	}
}

// checkShopBranches makes sure the comparison covered what the shop
// chart is for: each branch taken where it should be.
func checkShopBranches(t *testing.T, values string, caps sdkCaps, out *Output) {
	t.Helper()
	got := strings.Join(kinds(out.Objects), " ")
	has := func(what string) bool { return strings.Contains(" "+got+" ", " "+what+" ") }
	monitored := slices.Contains(caps.ours, "monitoring.coreos.com/v1/ServiceMonitor") && values != "no-migrations-no-metrics"
	withDB := values != "no-db-annotations"
	if has("ServiceMonitor/"+shopFullname(values)) != monitored || has("StatefulSet/"+dbFullname(values)) != withDB {
		t.Errorf("objects %s: want ServiceMonitor %v, db %v", got, monitored, withDB)
	}
	if len(out.CRDs) != 1 || out.CRDs[0].Template != "shop/crds/widgets.yaml" || out.CRDs[0].Object["kind"] != "CustomResourceDefinition" {
		t.Errorf("crds: %+v", out.CRDs)
	}
	want := 5 // ServiceAccount, ConfigMap, Service, Deployment, Widget; then db's Service and StatefulSet
	if withDB {
		want += 2
	}
	if monitored {
		want++
	}
	if len(out.Objects) != want {
		t.Errorf("%d objects (%s), want %d", len(out.Objects), got, want)
	}
	var hooks []string
	for _, h := range out.Hooks {
		hooks = append(hooks, h.Kind+"/"+h.Name+":"+strings.Join(h.Events, ",")+":"+map[bool]string{true: "test", false: "run"}[h.Test()])
	}
	wantHooks := []string{"Pod/" + shopFullname(values) + "-test-connection:test:test"}
	if values != "no-migrations-no-metrics" {
		wantHooks = append([]string{"Job/" + shopFullname(values) + "-migrate:post-install,post-upgrade:run"}, wantHooks...)
	}
	if d := cmp.Diff(wantHooks, hooks, cmp.Transformer("sort", func(s []string) []string { return slices.Sorted(slices.Values(s)) })); d != "" {
		t.Errorf("hooks (-want +got):\n%s", d)
	}
	for _, o := range out.Objects {
		if o.Object["kind"] != "Deployment" {
			continue
		}
		pod := o.Object["spec"].(map[string]any)["template"].(map[string]any)
		_, field := pod["spec"].(map[string]any)["securityContext"]
		_, annotation := pod["metadata"].(map[string]any)["annotations"].(map[string]any)["container.apparmor.security.beta.kubernetes.io/web"]
		modern := caps.kubeVersion == "v1.33.1" // Helm's default in tests is 1.20
		if field != modern || annotation == modern {
			t.Errorf("kube %q: appArmorProfile field %v, annotation %v", caps.kubeVersion, field, annotation)
		}
	}
}

func shopFullname(values string) string {
	return map[string]string{"tag-only": "shop", "no-db-annotations": "storefront-shop", "no-migrations-no-metrics": "shop-eu"}[values]
}

func dbFullname(values string) string {
	return map[string]string{"tag-only": "shop-db", "no-db-annotations": "storefront-db", "no-migrations-no-metrics": "shop-eu-db"}[values]
}

// TestHelmRequiredFailsAsHelmSDK: without image.tag both renderers fail
// on the chart's `required`, and ours names the template and line.
func TestHelmRequiredFailsAsHelmSDK(t *testing.T) {
	c := testChart(t, "shop")
	const msg = "image.tag is required: set the shop's image tag"
	_, sdkErr := sdkInstall(t, c, "shop", "shop-prod", nil, sdkCaps{})
	if sdkErr == nil || !strings.Contains(sdkErr.Error(), msg) {
		t.Fatalf("the SDK: %v", sdkErr)
	}
	_, err := NewRenderer(DefaultLimits()).Render(c, Release{Name: "shop", Namespace: "shop-prod"})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("ours: %v", err)
	}
	want := &Error{Chart: "shop", Template: "shop/templates/deployment.yaml", Line: lineOf(t, "shop", "templates/deployment.yaml", "required"), Message: msg}
	if d := cmp.Diff(want, e); d != "" {
		t.Fatalf("error (-want +got):\n%s\nthe SDK said: %v", d, sdkErr)
	}
}

// lineOf is the 1-based line of the first line of a test chart's file
// that contains what.
func lineOf(t *testing.T, chart, file, what string) int {
	t.Helper()
	lines := strings.Split(string(chartFiles(t, chart)[file]), "\n")
	for i, l := range lines {
		if strings.Contains(l, what) {
			return i + 1
		}
	}
	t.Fatalf("%s/%s has no %q", chart, file, what)
	return 0
}
