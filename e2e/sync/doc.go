// Package sync holds the end-to-end tests of instant sync, metrics and
// leader election (issue 6) that run the real propagit binary as a
// subprocess against testenv members: a GitHub push webhook reaching three
// members (and a forged signature refused), /metrics scraped and its key
// series asserted, and two leader-elected controllers where the follower
// takes over when the leader is killed.
//
// Run them with: go test ./e2e/sync/ -run TestSync -v -timeout 15m
package sync
