package cli

import (
	"fmt"
	"html"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/propagit/propagit/internal/diff"
	"github.com/propagit/propagit/internal/source"
	"github.com/propagit/propagit/internal/termsafe"
	"github.com/propagit/propagit/internal/verify"
)

// diffVerify is diff's --trusted-keys: the text and markdown reports say
// in one line, under their title, whether the head would pass the
// controller's --verify-commits with those keys, and the JSON report in
// its field signatures, commit by commit. It changes nothing else: the
// exit status stays diff's (propagit verify is the gate for CI).
type diffVerify struct {
	trustedKeys string
	mode        string

	keys *verify.Keys
	// repo is the repository both sides were read from; nil for
	// --base-dir and --head-dir, which --trusted-keys does not go with.
	repo *source.Repository
}

// bind binds --trusted-keys and --verify-commits to cmd, and checks them
// (reading the keys) before the command runs, so a wrong file fails before
// anything is rendered.
func (o *diffVerify) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.trustedKeys, "trusted-keys", "", "file or folder of trusted keys, as controller --trusted-keys: the report says whether the head's commits are signed as the controller requires")
	f.StringVar(&o.mode, "verify-commits", string(verify.ModeTip), `with --trusted-keys, what the controller verifies: "tip" (the head commit) or "all" (every commit from the base to the head)`)
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error { return o.validate(cmd.Flags().Changed("verify-commits")) }
}

func (o *diffVerify) validate(modeSet bool) error {
	mode, err := verify.ParseMode(o.mode)
	switch {
	case err != nil || mode == verify.ModeOff:
		return fmt.Errorf("invalid --verify-commits %q: want tip or all", o.mode)
	case o.trustedKeys == "" && modeSet:
		return fmt.Errorf("--verify-commits goes with --trusted-keys")
	case o.trustedKeys == "":
		return nil
	}
	o.keys, err = verify.ReadKeys(o.trustedKeys, verify.DefaultLimits())
	return err
}

// write writes report in format onto w, with the line saying whether head
// verifies under the title of the text and markdown reports, and the
// verdict in the JSON report's signatures. The markdown report stays
// within diff.MarkdownLimit with the line.
func (o *diffVerify) write(w io.Writer, report *diff.Report, format diff.Format, base, head diff.Revision) error {
	if o.keys == nil {
		return diff.Write(w, report, format)
	}
	n := o.note(base, head)
	var s string
	switch format {
	case diff.JSON:
		with := *report
		with.Signatures = n.json(o.mode)
		return diff.Write(w, &with, format)
	case diff.Text:
		s = underTitle(report.Text(), termsafe.String(n.text()))
	case diff.Markdown:
		line := n.markdown()
		s = underTitle(report.Markdown(diff.MarkdownLimit-len(line)-2), line)
	default:
		return diff.Write(w, report, format)
	}
	_, err := io.WriteString(w, s)
	return err
}

// underTitle inserts line as a paragraph of its own after the report's
// first paragraph, its title.
func underTitle(report, line string) string {
	i := strings.Index(report, "\n\n")
	if i < 0 {
		return report + "\n" + line + "\n"
	}
	return report[:i+2] + line + "\n\n" + report[i+2:]
}

// signedNote is the verdict on the head.
type signedNote struct {
	// signed: every commit checked verifies; checked false: not checked
	// (why says why).
	signed, checked bool
	// signers who signed the commits checked, in order, once each; commits
	// is how many were checked.
	signers []string
	commits int
	why     string
	// results are the verdicts on the commits checked, newest first.
	results []verify.Result
}

// note verifies head as the controller would: its commit (tip), or every
// commit from base to head (all; the base is what the controller verified
// last).
func (o *diffVerify) note(base, head diff.Revision) signedNote {
	if head.WorkingTree || head.Hash == "" {
		return signedNote{why: "the head is the working tree, not a commit"}
	}
	mode, _ := verify.ParseMode(o.mode)
	from := ""
	if mode == verify.ModeAll && !base.WorkingTree {
		from = base.Hash
	}
	rep := verify.New(o.keys, verify.DefaultLimits()).Revision(o.repo.Objects(), head.Hash, from, mode)
	if rep.Err != nil && verify.Reason(rep.Err) != verify.ReasonTooMany {
		// Not a verdict: the commits could not be read (a shallow clone).
		return signedNote{why: rep.Err.Error()}
	}
	if err := rep.Error(); err != nil {
		return signedNote{checked: true, why: err.Error(), results: rep.Results}
	}
	n := signedNote{signed: true, checked: true, commits: len(rep.Results), results: rep.Results}
	for _, r := range rep.Results {
		if !slices.Contains(n.signers, r.Signer) {
			n.signers = append(n.signers, r.Signer)
		}
	}
	return n
}

// json is the verdict for the JSON report.
func (n signedNote) json(mode string) *diff.Signatures {
	s := &diff.Signatures{Mode: mode, Checked: n.checked, Verified: n.signed, Commits: []diff.SignedCommit{}}
	if !n.signed {
		s.Error = n.why
	}
	for _, r := range n.results {
		s.Commits = append(s.Commits, diff.SignedCommit{Commit: r.Commit, Method: r.Method, Key: r.Key, Signer: r.Signer,
			Reason: r.Reason, Message: r.Message})
	}
	return s
}

func (n signedNote) text() string {
	switch {
	case !n.checked:
		return "Signed: not checked — " + n.why
	case !n.signed:
		return "Signed: NO — " + n.why + ": the controller will refuse this revision"
	}
	return "Signed: yes" + n.by(func(s string) string { return s })
}

func (n signedNote) markdown() string {
	switch {
	case !n.checked:
		return "**Signed: not checked** — " + markdownText(n.why)
	case !n.signed:
		return ":x: **Signed: NO** — " + markdownText(n.why) + ": the controller will refuse this revision"
	}
	return "**Signed: yes**" + n.by(func(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" })
}

// by says who signed: ", by alice" or ", by alice, bob (3 commits)".
func (n signedNote) by(name func(string) string) string {
	if n.commits == 0 {
		return " (no commit from the base to the head)"
	}
	names := make([]string, len(n.signers))
	for i, s := range n.signers {
		names[i] = name(s)
	}
	s := ", by " + strings.Join(names, ", ")
	if n.commits > 1 {
		s += fmt.Sprintf(" (%d commits)", n.commits)
	}
	return s
}

// markdownText escapes s for a markdown paragraph: no HTML, no emphasis,
// no links.
func markdownText(s string) string {
	s = html.EscapeString(s)
	return strings.NewReplacer("*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`).Replace(s)
}
