// Package childproc bounds the worker processes propagit runs untrusted
// code in (interpreter scripts, Helm charts): a worker dies with the
// process that started it, is the kernel's first choice when memory runs
// out, and cannot map more than a fixed headroom past its start. The
// controller's memory is then out of a worker's reach whatever it runs.
package childproc
