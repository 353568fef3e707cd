package interpret

import (
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// customization compiles the scripts of a testdata file (operation →
// literal block) for apiVersion/kind, each located at its line in the file.
func customization(t *testing.T, name, file, apiVersion, kind string) Customization {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var scripts map[string]string
	if err := yaml.Unmarshal(data, &scripts); err != nil {
		t.Fatal(err)
	}
	c := Customization{Name: name, APIVersion: apiVersion, Kind: kind}
	lines := strings.Split(string(data), "\n")
	for _, op := range Operations {
		src, ok := scripts[string(op)]
		if !ok {
			continue
		}
		line := 0
		for i, l := range lines {
			if strings.HasPrefix(l, string(op)+": |") {
				line = i + 2 // the block starts on the next line
			}
		}
		s, err := Compile(name, op, src, file, line)
		if err != nil {
			t.Fatal(err)
		}
		c.Scripts = append(c.Scripts, s)
	}
	return c
}

// calmLimits are DefaultLimits without their 1 s wall clock: a test that
// is not about time must not fail because a busy machine paused it.
func calmLimits() Limits {
	lim := DefaultLimits()
	lim.Timeout, lim.HardTimeout = time.Minute, 2*time.Minute
	return lim
}

// single compiles one script for example.io/v1 Thing, with calmLimits.
func single(t *testing.T, op Operation, src string) *Interpreter {
	t.Helper()
	return singleWith(t, calmLimits(), op, src)
}

// singleWith is single with lim.
func singleWith(t *testing.T, lim Limits, op Operation, src string) *Interpreter {
	t.Helper()
	s, err := Compile("thing", op, src, "ric.yaml", 10)
	if err != nil {
		t.Fatal(err)
	}
	return New(lim, []Customization{{Name: "thing", APIVersion: "example.io/v1", Kind: "Thing", Scripts: []*Script{s}}})
}

func thing() *unstructured.Unstructured {
	return object(`
apiVersion: example.io/v1
kind: Thing
metadata: {name: t, namespace: ns}
spec: {replicas: 3}
`)
}

func object(s string) *unstructured.Unstructured {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: normalize(m).(map[string]any)}
}

// normalize turns sigs.k8s.io/yaml's float64 numbers into int64 where
// whole, as the loader's unstructured objects hold them.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	}
	return v
}

const rolloutYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop}
spec:
  replicas: 6
  strategy: {canary: {steps: []}}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {pool: general}
      containers:
      - name: web
        image: nginx
        resources:
          requests: {cpu: 250m, memory: 64Mi}
      - name: sidecar
        image: envoy
        resources:
          limits: {cpu: 100m}
`
