package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A chart is its author's code: these tests are what a hostile author
// would try, each through a Renderer's worker process as propagit runs
// a chart it does not trust.

// hostileChart is a chart named evil with the given files besides its
// Chart.yaml.
func hostileChart(files map[string]string) map[string][]byte {
	out := map[string][]byte{"Chart.yaml": []byte("apiVersion: v2\nname: evil\nversion: 0.0.1\n")}
	for name, text := range files {
		out[name] = []byte(text)
	}
	return out
}

// hostileLimits are tight enough for a test to hit them quickly.
func hostileLimits() Limits {
	lim := DefaultLimits()
	lim.Timeout = 5 * time.Second
	lim.MaxMemory = 256 << 20
	lim.MaxOutput = 1 << 20
	return lim
}

// renderHostile renders files as chart evil in a worker under lim and
// returns the *Error it must fail with.
func renderHostile(t *testing.T, files map[string]string, lim Limits, rel Release) *Error {
	t.Helper()
	c, err := FromFiles(hostileChart(files), lim)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Name == "" {
		rel.Name, rel.Namespace = "evil", "default"
	}
	out, err := NewRenderer(lim).Render(c, rel)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("rendered %+v, err %v; want an *Error", out, err)
	}
	return e
}

// renderOK renders files as chart evil in a worker and returns the
// only object it must render.
func renderOK(t *testing.T, files map[string]string) map[string]any {
	t.Helper()
	c, err := FromFiles(hostileChart(files), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	out, err := NewRenderer(DefaultLimits()).Render(c, Release{Name: "evil", Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Objects) != 1 {
		t.Fatalf("objects: %+v", out.Objects)
	}
	return out.Objects[0].Object
}

func skipUnlessLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the worker's memory bound (RLIMIT_AS) is Linux only")
	}
}

// heapGrowth runs f and returns how much the test process's live heap
// grew and how much it allocated in all.
func heapGrowth(f func()) (live, total uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if after.HeapAlloc > before.HeapAlloc {
		live = after.HeapAlloc - before.HeapAlloc
	}
	return live, after.TotalAlloc - before.TotalAlloc
}

// TestHelmHostileExponentialOutput: named templates that each include
// the one below twice, 40 levels deep, over 4 KiB of text, would write
// 4 PiB. The worker is stopped (its memory bound) and the test process
// never holds more than the bounded answer.
func TestHelmHostileExponentialOutput(t *testing.T) {
	skipUnlessLinux(t)
	var defs strings.Builder
	defs.WriteString(`{{- define "l0" -}}` + strings.Repeat("0123456789abcdef", 256) + `{{- end -}}` + "\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&defs, `{{- define "l%d" -}}{{ include "l%d" . }}{{ include "l%d" . }}{{- end -}}`+"\n", i, i-1, i-1)
	}
	files := map[string]string{
		"templates/_bomb.tpl": defs.String(),
		"templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  x: {{ include \"l40\" . | quote }}\n",
	}
	lim := hostileLimits()
	lim.Timeout = 20 * time.Second // the memory bound, not the clock, must stop it
	var e *Error
	live, total := heapGrowth(func() { e = renderHostile(t, files, lim, Release{}) })
	if !strings.Contains(e.Message, "memory") && !strings.Contains(e.Message, "output") {
		t.Fatalf("err = %v; want the memory or output bound", e)
	}
	if live >= 64<<20 || total >= 64<<20 {
		t.Fatalf("the test process's heap grew by %d bytes (allocated %d)", live, total)
	}
	t.Logf("%v (heap +%d KiB, allocated %d KiB)", e, live>>10, total>>10)
}

// TestHelmHostileBusyLoop: a chart that loops for minutes is killed at
// its Timeout and the call returns soon after, with the timeout message.
func TestHelmHostileBusyLoop(t *testing.T) {
	// 400 million iterations of string work, in memory that stays small
	// (one `until 100000000` would be an 800 MB list first).
	files := map[string]string{"templates/cm.yaml": `{{- $s := "" }}
{{- range $i := until 20000 }}{{ range $j := until 20000 }}{{ $s = printf "%d-%d" $i $j | upper | sha256sum }}{{ end }}{{ end }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: busy
data:
  last: {{ $s }}
`}
	lim := hostileLimits()
	lim.Timeout = 2 * time.Second
	start := time.Now()
	e := renderHostile(t, files, lim, Release{})
	took := time.Since(start)
	if !strings.Contains(e.Message, "did not finish within 2s") {
		t.Fatalf("err = %v; want the timeout", e)
	}
	if took > lim.Timeout+3*time.Second {
		t.Fatalf("returned after %s", took)
	}
	t.Logf("%v (after %s)", e, took.Round(time.Millisecond))
}

// TestHelmHostileMemoryBomb: a chart that builds gigabytes (one huge
// string, or a list growing by 64 KiB strings) fails on the worker's
// memory bound, quickly, and the test process is unharmed.
func TestHelmHostileMemoryBomb(t *testing.T) {
	skipUnlessLinux(t)
	for name, tpl := range map[string]string{
		"repeat": `{{- $s := repeat 1073741824 "x" }}`,
		"list":   `{{- $l := list }}{{ range until 1000000 }}{{ $l = append $l (repeat 65536 "y") }}{{ end }}{{ $s := len $l }}`,
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"templates/cm.yaml": tpl + "\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n"}
			lim := hostileLimits()
			lim.Timeout = 20 * time.Second // the memory bound, not the clock, must stop it
			var e *Error
			live, _ := heapGrowth(func() { e = renderHostile(t, files, lim, Release{}) })
			if !strings.Contains(e.Message, "memory") && !strings.Contains(e.Message, "output") {
				t.Fatalf("err = %v; want the memory bound", e)
			}
			if live >= 64<<20 {
				t.Fatalf("the test process's heap grew by %d bytes", live)
			}
			t.Log(e)
		})
	}
}

// The environment probe: a worker started by this test binary writes
// its environment into the folder /tmp/propagit-helm-envprobe-<parent
// pid> when that folder exists, so a test can see exactly what a worker
// sees. Package variables are set before any init function runs, so
// this runs before worker.go's init serves the request (and exits).
var _ = writeWorkerEnv()

func envProbeDir(pid int) string {
	return filepath.Join("/tmp", "propagit-helm-envprobe-"+strconv.Itoa(pid))
}

func writeWorkerEnv() bool {
	if os.Getenv(workerEnv) != "1" {
		return false
	}
	dir := envProbeDir(os.Getppid())
	if _, err := os.Stat(dir); err != nil {
		return false
	}
	_ = os.WriteFile(filepath.Join(dir, strconv.Itoa(os.Getpid())), []byte(strings.Join(os.Environ(), "\x00")), 0o600)
	return true
}

// TestHelmHostileEnvironment: env and expandenv fail the render rather
// than give a value; a canary set in the controller's environment shows
// in no output or error, and the worker's environment does not hold it.
func TestHelmHostileEnvironment(t *testing.T) {
	const canary = "secret-canary"
	t.Setenv("PROPAGIT_CANARY", canary)
	home := os.Getenv("HOME")
	for name, expr := range map[string]string{
		"env-HOME":         `env "HOME"`,
		"expandenv-HOME":   `expandenv "$HOME"`,
		"env-canary":       `env "PROPAGIT_CANARY"`,
		"expandenv-canary": `expandenv "value=${PROPAGIT_CANARY}"`,
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: env\ndata:\n  v: {{ " + expr + " | quote }}\n"}
			e := renderHostile(t, files, DefaultLimits(), Release{})
			if s := e.Error(); strings.Contains(s, canary) || len(home) > 1 && strings.Contains(s, home) {
				t.Fatalf("the error shows the environment: %v", e)
			}
			if e.Template != "evil/templates/cm.yaml" || e.Line != 6 {
				t.Fatalf("err = %#v; want it at evil/templates/cm.yaml:6", e)
			}
		})
	}

	if runtime.GOOS != "linux" {
		return
	}
	dir := envProbeDir(os.Getpid())
	_ = os.RemoveAll(dir) // a crashed earlier run's, with this pid
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// Idle workers started before the probe folder existed wrote nothing.
	workers.mu.Lock()
	idle := workers.idle
	workers.idle = map[uint64][]*worker{}
	workers.mu.Unlock()
	for _, ws := range idle {
		for _, w := range ws {
			w.stop()
		}
	}
	obj := renderOK(t, map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n"})
	if obj["kind"] != "ConfigMap" {
		t.Fatalf("rendered %v", obj)
	}
	seen, err := os.ReadDir(dir)
	if err != nil || len(seen) != 1 {
		t.Fatalf("the probe saw %d workers (%v)", len(seen), err)
	}
	data, err := os.ReadFile(filepath.Join(dir, seen[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	for kv := range strings.SplitSeq(string(data), "\x00") {
		name, _, _ := strings.Cut(kv, "=")
		if strings.Contains(kv, canary) || name == "HOME" || name == "PATH" || name == "PROPAGIT_CANARY" {
			t.Errorf("the worker's environment holds %q", kv)
		}
	}
	t.Logf("the worker's environment: %q", strings.Split(string(data), "\x00"))
}

// TestHelmHostileFiles: .Files sees the chart's own files and nothing
// else, whatever path it is given.
func TestHelmHostileFiles(t *testing.T) {
	files := map[string]string{
		"files/a.txt": "chart file\n",
		"templates/cm.yaml": `{{- $g := list }}{{ range $p, $_ := .Files.Glob "**" }}{{ $g = append $g $p }}{{ end }}
{{- $up := list }}{{ range $p, $_ := .Files.Glob "../**" }}{{ $up = append $up $p }}{{ end }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: peek
data:
  passwd: {{ .Files.Get "../../../etc/passwd" | quote }}
  passwd2: {{ .Files.Get "files/../../../../../etc/passwd" | quote }}
  hostname: {{ .Files.Get "/etc/hostname" | quote }}
  environ: {{ .Files.GetBytes "/proc/self/environ" | len | quote }}
  lines: {{ .Files.Lines "/etc/passwd" | len | quote }}
  glob: {{ $g | sortAlpha | join "," | quote }}
  parentGlob: {{ $up | join "," | quote }}
  own: {{ .Files.Get "files/a.txt" | quote }}
`,
	}
	obj := renderOK(t, files)
	data := obj["data"].(map[string]any)
	for k, want := range map[string]string{"passwd": "", "passwd2": "", "hostname": "", "environ": "0", "lines": "0", "parentGlob": "", "own": "chart file\n"} {
		if data[k] != want {
			t.Errorf("%s = %q, want %q", k, data[k], want)
		}
	}
	chart := hostileChart(files)
	glob := strings.Split(data["glob"].(string), ",")
	if len(glob) == 0 || !strings.Contains(data["glob"].(string), "files/a.txt") {
		t.Errorf("glob ** = %q; want the chart's files", glob)
	}
	for _, p := range glob {
		if _, ok := chart[p]; !ok {
			t.Errorf("glob ** gave %q, not a file of the chart", p)
		}
	}
}

// TestHelmHostileLookupAndDNS: lookup answers an empty map (no cluster
// is reached) and getHostByName an empty string (no DNS).
func TestHelmHostileLookupAndDNS(t *testing.T) {
	obj := renderOK(t, map[string]string{"templates/cm.yaml": `{{- $s := lookup "v1" "Secret" "kube-system" "" }}
{{- $ns := lookup "v1" "Namespace" "" "kube-system" }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: peek
data:
  secrets: {{ len $s | quote }}
  secretsType: {{ kindOf $s | quote }}
  namespace: {{ toJson $ns | quote }}
  host: {{ getHostByName "example.com" | quote }}
`})
	want := map[string]any{"secrets": "0", "secretsType": "map", "namespace": "{}", "host": ""}
	for k, v := range want {
		if obj["data"].(map[string]any)[k] != v {
			t.Errorf("%s = %q, want %q", k, obj["data"].(map[string]any)[k], v)
		}
	}
}

// TestHelmHostileSchemaRefs: a values.schema.json that refers to a file
// or a URL fails the render; nothing is read (a readable, valid schema
// file would make the render pass if it were) and no request is made.
func TestHelmHostileSchemaRefs(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"type": "object"}`)
	}))
	defer srv.Close()
	valid := filepath.Join(t.TempDir(), "valid.schema.json")
	if err := os.WriteFile(valid, []byte(`{"type": "object"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, schema := range map[string]string{
		"file-passwd": `{"type": "object", "properties": {"x": {"$ref": "file:///etc/passwd"}}}`,
		"file-valid":  `{"type": "object", "properties": {"x": {"$ref": "file://` + valid + `"}}}`,
		"relative":    `{"type": "object", "properties": {"x": {"$ref": "other.schema.json"}}}`,
		"http-ref":    `{"type": "object", "properties": {"x": {"$ref": "` + srv.URL + `/x"}}}`,
		"http-schema": `{"$schema": "` + srv.URL + `/meta", "type": "object"}`,
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{
				"values.schema.json": schema,
				"values.yaml":        "x: {}\n",
				"templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n",
			}
			e := renderHostile(t, files, DefaultLimits(), Release{})
			if !strings.Contains(e.Message, "schema") {
				t.Fatalf("err = %v", e)
			}
			t.Log(e)
		})
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the schema server got %d requests", n)
	}
}

// tgz builds a chart archive of entries (tar names as given).
func tgz(t *testing.T, entries map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHelmHostileChartFiles: a chart's files are checked before anything
// renders: their number, their size, their names, an archive's paths.
func TestHelmHostileChartFiles(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxFiles, lim.MaxBytes = 10, 4096
	cm := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
	ok := hostileChart(map[string]string{"templates/cm.yaml": string(cm)})
	if _, err := FromFiles(ok, lim); err != nil {
		t.Fatalf("a small chart: %v", err)
	}
	with := func(extra map[string][]byte) map[string][]byte {
		out := hostileChart(map[string]string{"templates/cm.yaml": string(cm)})
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	many := map[string][]byte{}
	for i := range 10 {
		many[fmt.Sprintf("files/%d.txt", i)] = []byte("x")
	}
	for name, tc := range map[string]struct {
		files map[string][]byte
		want  string
	}{
		"too-many-files": {with(many), "more than 10 files"},
		"too-big":        {with(map[string][]byte{"files/big.bin": bytes.Repeat([]byte("x"), 5000)}), "over the limit of 4096"},
		"parent":         {with(map[string][]byte{"../x": []byte("x")}), "not a plain relative path"},
		"parent-inside":  {with(map[string][]byte{"templates/../../x": []byte("x")}), "not a plain relative path"},
		"absolute":       {with(map[string][]byte{"/abs": []byte("x")}), "not a plain relative path"},
		"backslash":      {with(map[string][]byte{`templates\..\..\x`: []byte("x")}), "not a plain relative path"},
		"empty-name":     {with(map[string][]byte{"": []byte("x")}), "not a plain relative path"},
		"no-chart-yaml":  {map[string][]byte{"templates/cm.yaml": cm}, "no Chart.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := FromFiles(tc.files, lim)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("FromFiles = %v, %v; want an error with %q", c, err, tc.want)
			}
		})
	}

	chartYAML := []byte("apiVersion: v2\nname: evil\nversion: 0.0.1\n")
	if _, err := FromArchive(tgz(t, map[string][]byte{"evil/Chart.yaml": chartYAML, "evil/templates/cm.yaml": cm}), lim); err != nil {
		t.Fatalf("a small archive: %v", err)
	}
	manyEntries := map[string][]byte{"evil/Chart.yaml": chartYAML}
	for i := range 20 {
		manyEntries[fmt.Sprintf("evil/files/%d.txt", i)] = []byte("x")
	}
	for name, tc := range map[string]struct {
		entries map[string][]byte
		want    string
	}{
		"parent-entry":   {map[string][]byte{"evil/Chart.yaml": chartYAML, "evil/../../evil": []byte("x")}, "parent directory"},
		"parent-top":     {map[string][]byte{"evil/Chart.yaml": chartYAML, "../../evil": []byte("x")}, "parent directory"},
		"too-many-files": {manyEntries, "more than 10 files"},
		"too-big":        {map[string][]byte{"evil/Chart.yaml": chartYAML, "evil/files/zeros": make([]byte, 64<<10)}, "over the limit of 4096"},
	} {
		t.Run("archive-"+name, func(t *testing.T) {
			c, err := FromArchive(tgz(t, tc.entries), lim)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("FromArchive = %v, %v; want an error with %q", c, err, tc.want)
			}
		})
	}
	if _, err := FromArchive(bytes.Repeat([]byte{0x1f}, 5000), lim); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("an archive over MaxBytes: %v", err)
	}
}

// TestHelmHostileDocumentWithoutKind: a rendered document that is not a
// Kubernetes object fails the render, naming its template.
func TestHelmHostileDocumentWithoutKind(t *testing.T) {
	for name, doc := range map[string]string{
		"no-kind":   "apiVersion: v1\nmetadata:\n  name: x\n",
		"kind-list": "apiVersion: v1\nkind: [ConfigMap]\nmetadata:\n  name: x\n",
	} {
		t.Run(name, func(t *testing.T) {
			e := renderHostile(t, map[string]string{
				"templates/ok.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n",
				"templates/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\n---\n" + doc,
			}, DefaultLimits(), Release{})
			if e.Template != "evil/templates/bad.yaml" || !strings.Contains(e.Message, "kind") {
				t.Fatalf("err = %#v", e)
			}
			t.Log(e)
		})
	}
}

// TestHelmHostileArchiveBomb: a small archive that expands to far more
// than MaxBytes (a big file of zeros), or holds far more entries than
// MaxFiles, fails without the controller ever expanding it: FromArchive
// runs in the controller, not in a worker.
func TestHelmHostileArchiveBomb(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxFiles, lim.MaxBytes = 100, 1<<20
	chartYAML := []byte("apiVersion: v2\nname: evil\nversion: 0.0.1\n")
	zeros := tgz(t, map[string][]byte{"evil/Chart.yaml": chartYAML, "evil/files/zeros": make([]byte, 64<<20)})
	many := map[string][]byte{"evil/Chart.yaml": chartYAML}
	for i := range 20000 {
		many[fmt.Sprintf("evil/files/%05d", i)] = nil
	}
	entries := tgz(t, many)
	for name, tc := range map[string]struct {
		archive []byte
		want    string
	}{
		"64MiB-of-zeros": {zeros, "over the limit of 1048576"},
		"20000-entries":  {entries, "more than 100 files"},
	} {
		t.Run(name, func(t *testing.T) {
			if int64(len(tc.archive)) > lim.MaxBytes {
				t.Fatalf("the archive is %d bytes, over MaxBytes itself", len(tc.archive))
			}
			var err error
			_, total := heapGrowth(func() { _, err = FromArchive(tc.archive, lim) })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("FromArchive: %v; want an error with %q", err, tc.want)
			}
			if total > 4*uint64(lim.MaxBytes) {
				t.Fatalf("FromArchive of a %d-byte archive allocated %d MiB to refuse it (MaxBytes %d MiB)", len(tc.archive), total>>20, lim.MaxBytes>>20)
			}
			t.Logf("%v (allocated %d KiB)", err, total>>10)
		})
	}
}
