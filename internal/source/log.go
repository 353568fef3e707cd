package source

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Commit is one commit of the followed branch, as a reader lists it.
type Commit struct {
	Hash    string
	Subject string
	Author  string
	Time    time.Time
}

// Log returns up to max commits of the branch as last fetched, newest
// first by commit time.
func (f *Follower) Log(max int) ([]Commit, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repo == nil {
		return nil, fmt.Errorf("log before the first fetch of %s", f.safe)
	}
	tip, err := f.repo.Reference(plumbing.NewBranchReferenceName(f.opts.Branch), true)
	if err != nil {
		return nil, fmt.Errorf("branch %s not found in %s: %w", f.opts.Branch, f.safe, err)
	}
	it, err := f.repo.Log(&git.LogOptions{From: tip.Hash(), Order: git.LogOrderCommitterTime})
	if err != nil {
		return nil, fmt.Errorf("failed to read the history of %s: %w", f.opts.Branch, err)
	}
	defer it.Close()
	var out []Commit
	err = it.ForEach(func(c *object.Commit) error {
		if len(out) >= max {
			return storer.ErrStop
		}
		subject, _, _ := strings.Cut(strings.TrimSpace(c.Message), "\n")
		out = append(out, Commit{Hash: c.Hash.String(), Subject: subject, Author: c.Author.Name, Time: c.Committer.When})
		return nil
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return nil, fmt.Errorf("failed to read the history of %s: %w", f.opts.Branch, err)
	}
	return out, nil
}
