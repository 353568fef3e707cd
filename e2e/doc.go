// Package e2e holds propagit's end-to-end scenarios: real member clusters
// (etcd and kube-apiserver processes from internal/testenv), a real Git
// remote (git http-backend over smart HTTP from internal/gitserver, or a
// file:// URL), real go-git, and real server-side apply. Nothing is faked.
//
// The controller runs in-process, started and stopped by each test. Every
// test starts its own members and its own remote, so tests share nothing.
// Most tests wait on members far more than they compute, so they call
// t.Parallel and run three at a time (-parallel changes it; testenv starts
// at most three members at once in the process). A test stays serial when
// it measures the process or the machine (script budgets, memory peaks,
// many objects, a browser), so others' load cannot make it fail:
//
//	go test ./e2e/ -run TestPush -v -timeout 20m
//
// Test names say what they cover: TestPush… for push mode. Waits poll a
// condition until a deadline and report the last state they saw; there
// are no sleeps.
//
// e2e/tools holds separate modules that build the member binaries; they
// are not part of this package.
package e2e
