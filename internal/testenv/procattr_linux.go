package testenv

import "syscall"

// sysProcAttr puts the child in its own process group, so Stop can signal it
// and everything it spawns, and asks the kernel to SIGKILL it when the thread
// that started it dies. The Go runtime only retires an OS thread when a
// goroutine locked to it exits, and testenv never locks threads, so in
// practice the child dies with the test binary.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
