package cli

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/propagit/propagit/internal/controller"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/source"
)

// limitOptions are the load limits of every command that loads a source
// (render, lint, explain, diff, controller): a source over one of them is a
// load error naming the file, never a crash.
type limitOptions struct {
	load.Options
}

func (l *limitOptions) bindFlags(f *pflag.FlagSet) {
	l.Options = load.DefaultOptions()
	f.Int64Var(&l.MaxFileBytes, "max-file-bytes", l.MaxFileBytes, "largest file of the source, in bytes")
	f.Int64Var(&l.MaxSourceBytes, "max-source-bytes", l.MaxSourceBytes, "largest source, all files read together, in bytes")
	f.IntVar(&l.MaxDocuments, "max-documents", l.MaxDocuments, "most YAML documents in the source")
	f.IntVar(&l.MaxNodes, "max-yaml-nodes", l.MaxNodes, "most YAML nodes in the source, counted after aliases are expanded (kustomize's inputs and outputs included)")
	f.DurationVar(&l.Timeout, "load-timeout", l.Timeout, "longest time to load (and, for render, render) one revision")
	f.StringSliceVar(&l.DecryptKinds, "decrypt-kinds", nil, "kinds besides Secret that may be SOPS-encrypted in the source")
}

// sourceLimits are the limits applied while a revision is copied out of Git.
func (l *limitOptions) sourceLimits() source.Limits {
	return source.Limits{MaxFileBytes: l.MaxFileBytes, MaxTotalBytes: l.MaxSourceBytes}
}

// limitedFetcher hands the controller's loader each revision together with
// the limits (see load.WithOptions).
type limitedFetcher struct {
	controller.Fetcher
	opts load.Options
}

func (f limitedFetcher) Fetch(ctx context.Context) (controller.Snapshot, error) {
	snap, err := f.Fetcher.Fetch(ctx)
	if err == nil {
		snap.FS = load.WithOptions(snap.FS, f.opts)
	}
	return snap, err
}

// ReadRevision reads a past revision under the same limits.
func (f limitedFetcher) ReadRevision(ctx context.Context, rev string) (controller.Snapshot, error) {
	snap, err := f.Fetcher.ReadRevision(ctx, rev)
	if err == nil {
		snap.FS = load.WithOptions(snap.FS, f.opts)
	}
	return snap, err
}
