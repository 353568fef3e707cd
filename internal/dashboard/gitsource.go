package dashboard

import (
	"context"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/propagit/propagit/internal/source"
)

// NewGitSource reads the history and trees of the branch f follows.
func NewGitSource(f *source.Follower) Source { return &gitSource{f: f} }

type gitSource struct {
	f *source.Follower
}

func (g *gitSource) Commits(ctx context.Context, n int) ([]source.Commit, error) {
	if _, err := g.f.Fetch(ctx); err != nil {
		return nil, err
	}
	return g.f.Log(n)
}

func (g *gitSource) Tree(_ context.Context, revision string) (filesys.FileSystem, error) {
	fs := filesys.MakeFsInMemory()
	if err := g.f.Read(source.Revision{Hash: revision}, fs); err != nil {
		return nil, err
	}
	return fs, nil
}
