package agent

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
)

// The same outage must give the same status message on every poll, or each
// poll is a status transition and a write.
func TestStableErrorIsTheSameForEveryAttemptOfOneOutage(t *testing.T) {
	netErr := func(op string, local int, errno syscall.Errno) error {
		remote := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 443}
		var src net.Addr
		if local > 0 {
			src = &net.TCPAddr{IP: net.IPv4(10, 0, 0, 9), Port: local}
		}
		syscallName := map[string]string{"dial": "connect", "read": "read", "write": "write"}[op]
		inner := &url.Error{Op: "Get", URL: "https://git.example.com/fleet.git/info/refs",
			Err: &net.OpError{Op: op, Net: "tcp", Source: src, Addr: remote, Err: os.NewSyscallError(syscallName, errno)}}
		return fmt.Errorf("failed to fetch refs/heads/propagit/works from https://git.example.com/fleet.git: %w", inner)
	}
	const reset = "failed to fetch refs/heads/propagit/works from https://git.example.com/fleet.git: connection reset by peer"
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"reset while reading", netErr("read", 60328, syscall.ECONNRESET), reset},
		{"reset on another port", netErr("read", 60344, syscall.ECONNRESET), reset},
		{"reset while dialling", netErr("dial", 0, syscall.ECONNRESET), reset},
		{"writing into a reset connection", netErr("write", 60352, syscall.EPIPE), reset},
		{"refused", netErr("dial", 0, syscall.ECONNREFUSED),
			"failed to fetch refs/heads/propagit/works from https://git.example.com/fleet.git: connection refused"},
		{"text only, from an error that does not unwrap",
			errors.New(`failed to push x: unexpected client error: Post "https://h/x": read tcp 10.0.0.9:60328->10.0.0.5:443: read: connection reset by peer`),
			`failed to push x: unexpected client error: Post "https://h/x": connection reset by peer`},
		{"not a network error", errors.New("failed to read the work of member1: work member1: manifest 3: invalid"),
			"failed to read the work of member1: work member1: manifest 3: invalid"},
	}
	for _, tt := range tests {
		if got := stableError(tt.err); got != tt.want {
			t.Errorf("%s: stableError = %q, want %q", tt.name, got, tt.want)
		}
	}
}
