//go:build !linux

package testenv

import "syscall"

// sysProcAttr puts the child in its own process group. Without Linux's
// parent-death signal, children of a killed test binary survive; Stop and the
// signal handler still stop them on every ordinary exit path.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
