package controller

import (
	"context"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/source"
)

// GitFetcher adapts a source.Follower to a Fetcher, reading each revision's
// tree into memory once.
func GitFetcher(f *source.Follower) Fetcher { return &gitFetcher{f: f} }

type gitFetcher struct {
	f    *source.Follower
	last Snapshot
}

func (g *gitFetcher) Fetch(ctx context.Context) (Snapshot, error) {
	rev, err := g.f.Fetch(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	if rev.Hash == g.last.Revision {
		return g.last, nil
	}
	fs := filesys.MakeFsInMemory()
	if err := g.f.Read(rev, fs); err != nil {
		return Snapshot{}, err
	}
	g.last = Snapshot{Revision: rev.Hash, Message: rev.Message, FS: fs, Root: "/"}
	return g.last, nil
}
