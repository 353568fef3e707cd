package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/termsafe"
	"github.com/propagit/propagit/internal/verify"
)

type verifyOptions struct {
	repo        string
	revision    string
	rangeSpec   string
	trustedKeys string
	mode        string
	output      string
}

func newVerifyCommand() *cobra.Command {
	o := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify --repo DIR|URL --trusted-keys FILE",
		Short: "Check commit signatures against trusted keys, as the controller would",
		Long: `verify checks the signatures of a revision's commits with the same trusted
keys and rules as controller --verify-commits, and says per commit who signed
it or why it fails: not signed, signed by a key that is not trusted, a bad or
malformed signature, an expired or revoked key. It exits 1 when a commit
fails, for CI.

--mode tip checks the commit --revision names (default HEAD); --mode all
checks every commit of its history. --range A..B checks every commit of B
that A does not have (mode all from A: what the controller checks when it
moves from A to B).

Trusted keys are OpenPGP armored public keys and SSH allowed_signers lines,
in one file or a folder of files, never read from the repository.`,
		Example: `  propagit verify --repo . --trusted-keys keys/allowed_signers
  propagit verify --repo https://git.example.com/fleet.git --range origin/main~5..origin/main --trusted-keys trusted/
  propagit verify --repo . --revision v1.4 --trusted-keys release.asc -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), cmd.OutOrStdout()) },
	}
	f := cmd.Flags()
	f.StringVar(&o.repo, "repo", ".", "repository: a folder of a working copy, a bare repository, or a URL (cloned into memory)")
	f.StringVar(&o.revision, "revision", "HEAD", "revision to check")
	f.StringVar(&o.rangeSpec, "range", "", "A..B: check every commit of B that A does not have")
	f.StringVar(&o.trustedKeys, "trusted-keys", "", "file or folder of trusted keys: OpenPGP armored public keys and SSH allowed_signers lines")
	f.StringVar(&o.mode, "mode", "tip", `"tip" (the revision's commit) or "all" (every commit of its history); --range is always all`)
	bindFormat(cmd, &o.output, "text", []string{"text", "json"}, "output format")
	_ = cmd.MarkFlagRequired("trusted-keys")
	return cmd
}

func (o *verifyOptions) run(parent context.Context, w io.Writer) error {
	mode, err := verify.ParseMode(o.mode)
	if err != nil || mode == verify.ModeOff {
		return fmt.Errorf("invalid --mode %q: want tip or all", o.mode)
	}
	if o.rangeSpec != "" && o.revision != "HEAD" {
		return errors.New("--range and --revision do not go together")
	}
	keys, err := verify.ReadKeys(o.trustedKeys, verify.DefaultLimits())
	if err != nil {
		return err
	}
	ctx := orBackground(parent)
	repo, err := source.Open(ctx, o.repo)
	if err != nil {
		return err
	}
	tip, base, err := o.resolve(repo)
	if err != nil {
		return err
	}
	if o.rangeSpec != "" {
		mode = verify.ModeAll
	}
	rep := verify.New(keys, verify.DefaultLimits()).Revision(repo.Objects(), tip, base, mode)
	if err := writeVerifyReport(w, rep, o.output); err != nil {
		return err
	}
	if err := rep.Error(); err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	return nil
}

// resolve returns the tip and the base ("" for none) the flags name.
func (o *verifyOptions) resolve(repo *source.Repository) (string, string, error) {
	if o.rangeSpec == "" {
		tip, err := repo.Resolve(o.revision)
		return tip, "", err
	}
	a, b, ok := strings.Cut(o.rangeSpec, "..")
	if !ok || a == "" || b == "" || strings.HasPrefix(b, ".") {
		return "", "", fmt.Errorf("invalid --range %q: want A..B", o.rangeSpec)
	}
	base, err := repo.Resolve(a)
	if err != nil {
		return "", "", err
	}
	tip, err := repo.Resolve(b)
	return tip, base, err
}

// writeVerifyReport prints one line per commit (text) or the report
// (json).
func writeVerifyReport(w io.Writer, rep *verify.Report, format string) error {
	if format == "json" {
		out := struct {
			*verify.Report
			Verified bool   `json:"verified"`
			Error    string `json:"error,omitempty"`
		}{Report: rep, Verified: rep.Error() == nil}
		if err := rep.Error(); err != nil {
			out.Error = err.Error()
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := termsafe.NewWriter(w)
	for _, r := range rep.Results {
		mark := "ok  "
		if !r.OK() {
			mark = "FAIL"
		}
		fmt.Fprintf(tw, "%s %s\n", mark, r)
	}
	switch err := rep.Error(); {
	case rep.Err != nil:
		fmt.Fprintf(tw, "FAIL %v\n", rep.Err)
	case err != nil:
		fmt.Fprintf(tw, "%s: not verified (%d commits checked)\n", shortRev(rep.Tip), len(rep.Results))
	default:
		fmt.Fprintf(tw, "%s: verified (%d commits checked)\n", shortRev(rep.Tip), len(rep.Results))
	}
	return nil
}

// shortRev shortens a commit hash.
func shortRev(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}
