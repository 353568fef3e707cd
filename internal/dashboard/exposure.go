package dashboard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// ErrTokenRequired is returned by RequireToken.
var ErrTokenRequired = errors.New("a bearer token is required to serve the dashboard beyond this host")

// RequireToken refuses to serve without a token on an address other hosts
// reach. A user header does not stand in for the token there: whoever
// reaches the port directly can set any header, and only a proxy on the
// same host can make sure they cannot.
func RequireToken(addr net.Addr, opts Options) error {
	if opts.Token != "" {
		return nil
	}
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s: %w", addr, ErrTokenRequired)
}

// loopbackHost reports whether a request's Host names this machine by a
// loopback name. A dashboard without a token answers only those: with DNS
// rebinding, a page on a name the attacker owns resolves it to 127.0.0.1
// and reads the dashboard as its own origin, but its requests still carry
// the attacker's name in Host.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostAllowed is the Host check of ServeHTTP.
func (s *Server) hostAllowed(r *http.Request) bool {
	return s.opts.Token != "" || loopbackHost(r.Host)
}
