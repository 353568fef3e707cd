// Package gitrepo is propagit's go-git plumbing, shared by the fleet
// source (internal/source) and the Git works stores: the one in-process
// transport for local repositories, URL redaction, the classification of
// push and fetch errors, trees and blobs written and read in a storer, and
// remotes. It knows nothing of Works or templates.
package gitrepo
