package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// Set at link time: -X github.com/propagit/propagit/internal/cli.version=…
// When they are left empty, the version comes from the build information Go
// records in every binary (go install …@v1.2.3, or a build in a Git
// checkout).
var (
	version = ""
	commit  = ""
)

// VersionInfo is what `propagit version` prints.
type VersionInfo struct {
	// Version is the release (ldflags), else the module version Go recorded
	// (v1.2.3 from go install …@v1.2.3), else "dev".
	Version string `json:"version"`
	// Revision is the source commit (ldflags, else vcs.revision), or "unknown".
	Revision string `json:"revision"`
	// Dirty says the working tree had uncommitted changes (vcs.modified).
	Dirty bool `json:"dirty"`
	// CommitTime is vcs.time, when Go recorded it.
	CommitTime string `json:"commitTime,omitempty"`
	// KubernetesClient is the version of k8s.io/client-go compiled in.
	KubernetesClient string `json:"kubernetesClient"`
	// Go is the toolchain that built the binary.
	Go string `json:"go"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// String is the default text output.
func (v VersionInfo) String() string {
	rev := v.Revision
	if v.Dirty {
		rev += " (dirty)"
	}
	s := fmt.Sprintf("propagit %s\ncommit: %s\n", v.Version, rev)
	if v.CommitTime != "" {
		s += fmt.Sprintf("commit time: %s\n", v.CommitTime)
	}
	return s + fmt.Sprintf("kubernetes client: %s\ngo: %s\nplatform: %s\n", v.KubernetesClient, v.Go, v.Platform)
}

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the propagit version, commit and Kubernetes client version",
		Long: `Print the propagit version, the source commit and whether the tree was
dirty, the Kubernetes client and Go versions. Release builds carry them in
ldflags; a binary from go install or go build reports what Go recorded.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, _ := debug.ReadBuildInfo()
			v := resolveVersion(version, commit, info)
			v.Go, v.Platform = runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH
			return writeVersion(cmd.OutOrStdout(), v, output)
		},
	}
	bindFormat(cmd, &output, "text", versionFormats, "output format")
	return cmd
}

// versionFormats are the values of version's -o.
var versionFormats = []string{"text", "json", "yaml"}

func writeVersion(w io.Writer, v VersionInfo, output string) error {
	switch output {
	case "text", "":
		_, err := io.WriteString(w, v.String())
		return err
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		out, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	return fmt.Errorf("-o %q: want one of %s", output, strings.Join(versionFormats, ", "))
}

// resolveVersion prefers the link-time values and falls back, field by
// field, on the build information (info may be nil).
func resolveVersion(ldVersion, ldCommit string, info *debug.BuildInfo) VersionInfo {
	v := VersionInfo{Version: ldVersion, Revision: ldCommit, KubernetesClient: "unknown"}
	if info != nil {
		if v.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v.Version = info.Main.Version
		}
		vcs := map[string]string{}
		for _, s := range info.Settings {
			vcs[s.Key] = s.Value
		}
		// The dirty flag belongs to vcs.revision: keep it only when the
		// revision is that one (ldflags may carry its short form).
		if rev := vcs["vcs.revision"]; rev != "" && strings.HasPrefix(rev, v.Revision) {
			if v.Revision == "" {
				v.Revision = rev
			}
			v.Dirty = vcs["vcs.modified"] == "true"
			v.CommitTime = vcs["vcs.time"]
		}
		v.KubernetesClient = depVersion(info, "k8s.io/client-go")
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	if v.Revision == "" {
		v.Revision = "unknown"
	}
	return v
}

// depVersion returns the version of a dependency compiled into the binary.
func depVersion(info *debug.BuildInfo, path string) string {
	for _, d := range info.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return "unknown"
}
