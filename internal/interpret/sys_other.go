//go:build !linux

package interpret

import "syscall"

// workerAttr has nothing to add outside Linux.
func workerAttr() *syscall.SysProcAttr { return nil }

// limitAddressSpace is Linux only: elsewhere a worker is bounded by its
// allocation watchdog and the parent's kill.
func limitAddressSpace() {}
