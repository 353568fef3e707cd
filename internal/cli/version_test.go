package cli

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func buildInfo(mainVersion string, settings ...string) *debug.BuildInfo {
	info := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/propagit/propagit", Version: mainVersion},
		Deps: []*debug.Module{{Path: "k8s.io/client-go", Version: "v0.37.2"}},
	}
	for i := 0; i+1 < len(settings); i += 2 {
		info.Settings = append(info.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return info
}

func TestResolveVersion(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name                string
		ldVersion, ldCommit string
		info                *debug.BuildInfo
		want                VersionInfo
	}{{
		name: "no build information at all",
		want: VersionInfo{Version: "dev", Revision: "unknown", KubernetesClient: "unknown"},
	}, {
		name: "go install module@version: the module version",
		info: buildInfo("v1.4.0"),
		want: VersionInfo{Version: "v1.4.0", Revision: "unknown", KubernetesClient: "v0.37.2"},
	}, {
		name: "go build in a clean checkout: devel is not a version, the revision is",
		info: buildInfo("(devel)", "vcs", "git", "vcs.revision", rev, "vcs.time", "2026-11-30T10:00:00Z", "vcs.modified", "false"),
		want: VersionInfo{Version: "dev", Revision: rev, CommitTime: "2026-11-30T10:00:00Z", KubernetesClient: "v0.37.2"},
	}, {
		name: "go build in a dirty checkout",
		info: buildInfo("v0.0.0-20261130100000-0123456789ab+dirty", "vcs.revision", rev, "vcs.modified", "true"),
		want: VersionInfo{Version: "v0.0.0-20261130100000-0123456789ab+dirty", Revision: rev, Dirty: true, KubernetesClient: "v0.37.2"},
	}, {
		name:      "ldflags win; the dirty flag of the same (short) revision is kept",
		ldVersion: "v1.5.0", ldCommit: "0123456",
		info: buildInfo("(devel)", "vcs.revision", rev, "vcs.modified", "true"),
		want: VersionInfo{Version: "v1.5.0", Revision: "0123456", Dirty: true, KubernetesClient: "v0.37.2"},
	}, {
		name:      "ldflags name another revision: the checkout's dirty flag is not theirs",
		ldVersion: "v1.5.0", ldCommit: "fedcba9",
		info: buildInfo("(devel)", "vcs.revision", rev, "vcs.modified", "true"),
		want: VersionInfo{Version: "v1.5.0", Revision: "fedcba9", KubernetesClient: "v0.37.2"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resolveVersion(tt.ldVersion, tt.ldCommit, tt.info)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestVersionOutputGolden(t *testing.T) {
	v := VersionInfo{
		Version: "v1.5.0", Revision: "0123456789abcdef0123456789abcdef01234567", Dirty: true,
		CommitTime: "2026-11-30T10:00:00Z", KubernetesClient: "v0.37.2", Go: "go1.26.8", Platform: "linux/amd64",
	}
	for _, format := range versionFormats {
		var out bytes.Buffer
		if err := writeVersion(&out, v, format); err != nil {
			t.Fatal(err)
		}
		golden(t, "version."+format, out.String())
	}
	if err := writeVersion(&bytes.Buffer{}, v, "xml"); err == nil || !strings.Contains(err.Error(), "text, json, yaml") {
		t.Errorf("-o xml: %v, want an error naming the allowed formats", err)
	}
}

// TestVersionCommandJSON runs the command itself: the test binary has no
// ldflags and no VCS stamp, so it must fall back to "dev" and "unknown".
// (Test binaries carry no dependency list; hack/image's test runs a real
// build.)
func TestVersionCommandJSON(t *testing.T) {
	stdout, _ := runCLI(t, 0, "version", "-o", "json")
	var got VersionInfo
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("version -o json is not JSON: %v\n%s", err, stdout)
	}
	if got.Version != "dev" || got.Revision != "unknown" || got.Go == "" || got.Platform == "" {
		t.Errorf("unexpected version of the test binary: %+v", got)
	}
}
