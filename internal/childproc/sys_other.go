//go:build !linux

package childproc

import "syscall"

// Attr has nothing to add outside Linux.
func Attr() *syscall.SysProcAttr { return nil }

// LimitAddressSpace is Linux only: elsewhere a worker is bounded by the
// parent's kill.
func LimitAddressSpace(uint64) {}
