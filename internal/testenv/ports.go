package testenv

import (
	"fmt"
	"net"
	"sync"
)

// handedOut remembers every port this process gave to a member, so members
// started in parallel never get the same port even though each port is only
// probed, not held, until the binary binds it.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// freePorts returns n distinct free ports on 127.0.0.1. All probe listeners
// are held open until n ports are collected, so the kernel cannot return the
// same port twice within one call.
func freePorts(n int) ([]int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for attempts := 0; len(ports) < n; attempts++ {
		if attempts > 100*n {
			return nil, fmt.Errorf("failed to find %d free loopback ports", n)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("failed to probe a free port: %w", err)
		}
		listeners = append(listeners, l)
		port := l.Addr().(*net.TCPAddr).Port
		if handedOut.ports[port] {
			continue
		}
		handedOut.ports[port] = true
		ports = append(ports, port)
	}
	return ports, nil
}
