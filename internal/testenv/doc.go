// Package testenv starts real member clusters on loopback for tests.
//
// Each member is its own etcd and kube-apiserver, built from source by
// `make test-assets` (e2e/tools/build-assets.sh), on free 127.0.0.1 ports in
// its own folder under one temporary root per Env. With Options.Workloads a
// member also runs kube-controller-manager, kube-scheduler and kwok with one
// fake Node, so Deployments become Available without a container runtime.
// kwok drives Pods through its pod/general stages, which simulate 1–6 s of
// delay for each of the create and ready steps, so a new Deployment takes a
// few seconds (measured: ~7 s for 3 replicas) to become Available.
//
// Lifecycle contract:
//
//   - Every child process runs in its own process group with a parent-death
//     signal (SIGKILL on Linux), so it dies with the test binary even when the
//     binary is killed without running any cleanup.
//   - Env.Stop (registered with t.Cleanup by Start) kills every process group
//     (no grace: the data is removed next),
//     waits for it, and removes the temporary root. New installs a
//     SIGINT/SIGTERM handler that does the same for every live Env before the
//     signal takes its default effect.
//   - Member.StopAPIServer and Member.StartAPIServer restart only the
//     kube-apiserver, on the same port with the same certificates, so the
//     member's rest.Config and kubeconfig stay valid and etcd keeps the data.
//
// Every process logs to <member dir>/<binary>.log. When a test using Start
// fails, the tail of each member's apiserver log is printed before the folder
// is removed.
//
// The binaries are read from $PROPAGIT_ASSETS, by default
// $HOME/.cache/propagit/assets/k8s-v1.37.2.
package testenv
