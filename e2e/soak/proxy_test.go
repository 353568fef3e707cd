package soak

import (
	"io"
	"net"
	"sync"
	"time"
)

// gitProxy is a TCP proxy in front of the Git server through which every
// propagit process reaches Git, so the soak can fail Git the way a network
// does: stall (connections held, nothing moves), drop (every connection
// closed at once) and slow (each chunk delayed).
type gitProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	stalled chan struct{} // non-nil while stalled; closed on resume
	delay   time.Duration
	closed  bool
}

// newGitProxy listens on a loopback port and forwards to target.
func newGitProxy(target string) (*gitProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &gitProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	return p, nil
}

// addr is the proxy's host:port.
func (p *gitProxy) addr() string { return p.ln.Addr().String() }

func (p *gitProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

// forward waits out a stall, then pipes c to a new connection to target.
func (p *gitProxy) forward(c net.Conn) {
	if !p.track(c) {
		return
	}
	defer p.untrack(c)
	p.gate()
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(up) {
		return
	}
	defer p.untrack(up)
	done := make(chan struct{}, 2)
	go func() { p.pipe(up, c); done <- struct{}{} }()
	go func() { p.pipe(c, up); done <- struct{}{} }()
	<-done // either side ending ends both
}

// pipe copies chunks from src to dst, each after the gate.
func (p *gitProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				return
			}
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			return
		}
	}
}

// gate blocks while the proxy is stalled, then sleeps the current delay.
func (p *gitProxy) gate() {
	p.mu.Lock()
	ch, d := p.stalled, p.delay
	p.mu.Unlock()
	if ch != nil {
		<-ch
	}
	if d > 0 {
		time.Sleep(d)
	}
}

func (p *gitProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *gitProxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// stall holds every connection, new and open, until resume.
func (p *gitProxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalled == nil {
		p.stalled = make(chan struct{})
	}
}

// resume lets stalled connections go on.
func (p *gitProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalled != nil {
		close(p.stalled)
		p.stalled = nil
	}
}

// setDelay delays every chunk by d (0: full speed).
func (p *gitProxy) setDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// drop closes every open connection and returns how many there were.
func (p *gitProxy) drop() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.conns)
	for c := range p.conns {
		c.Close()
	}
	return n
}

// close stops accepting, closes every connection and ends any stall.
func (p *gitProxy) close() {
	p.ln.Close()
	p.resume()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.drop()
}
