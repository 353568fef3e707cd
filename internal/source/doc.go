// Package source reads the files of one revision of a Git repository, with
// go-git and without a git binary: a commit's tree (a branch, a tag, a short
// or long hash, or an expression such as HEAD~1), or the working tree of a
// checkout with its uncommitted changes.
//
// A repository is opened from a path (a plain working copy, a linked
// worktree, a bare repository or a shallow clone) or cloned into memory from
// a URL (file://, http://, https://, ssh://). Nothing is ever checked out
// into the user's tree: files are copied into a FileWriter, normally an
// in-memory filesystem that the loader reads.
//
// The file:// transport is served in-process (internal/gitrepo, shared with
// the Git works stores), so cloning a local URL needs no git-upload-pack. Errors never carry the userinfo or query of
// a URL.
package source
