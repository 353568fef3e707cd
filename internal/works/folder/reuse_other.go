//go:build !unix

package folder

import "os"

// reuser is the unix hard-link reuse of an earlier render's files (see
// reuse_unix.go); elsewhere every file is written.
type reuser struct{}

func newReuser(*os.Root, string, *os.Root) (*reuser, error) { return nil, nil }

func (r *reuser) close() {}

func (r *reuser) link(string, []byte) (bool, error) { return false, nil }
