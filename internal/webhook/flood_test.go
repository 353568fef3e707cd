package webhook

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"
)

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// stall opens a connection to addr and sends a GitHub push whose body
// stops short of its declared length: it returns once sent bytes are
// written or the server stops reading. The caller closes the connection.
func stall(t *testing.T, addr string, sent int, chunk []byte) net.Conn {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return nil
	}
	_ = conn.SetWriteDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-GitHub-Event: push\r\n"+
		"X-Hub-Signature-256: sha256=00\r\nContent-Length: %d\r\n\r\n", Path, MaxBodyBytes)
	for n := 0; n < sent; n += len(chunk) {
		if _, err := conn.Write(chunk); err != nil {
			break // refused (503) or timed out (408): the server closed it
		}
	}
	return conn
}

// A flood of requests whose bodies never finish used to pin up to 1 MiB of
// heap each until the client gave up. Now every body is streamed through
// the HMAC and never kept, for BodyTimeout at most, so the heap stays flat
// however many are open, and a genuine signed push gets through at once:
// unauthenticated requests hold no in-flight slot and spend no rate-limit
// token.
func TestStalledBodyFloodLeavesHeapFlat(t *testing.T) {
	const conns, inFlight = 64, 4
	f := newFixture(t, func(o *Options) { o.MaxInFlight, o.BodyTimeout, o.Burst = inFlight, time.Second, 1 })
	mux := http.NewServeMux()
	mux.Handle(Path, f.handler)
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ReadHeaderTimeout = 5 * time.Second // what the controller had: no body timeout
	srv.Start()
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	before := heapInUse()
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	var mu sync.Mutex
	var open []net.Conn
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c := stall(t, addr, 900<<10, chunk); c != nil {
				mu.Lock()
				open = append(open, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	// Every attacker has written 900 KiB and holds its connection open.
	// The server reads what the kernel buffered at its own pace: watch the
	// heap over a window of two seconds and keep the peak.
	var peak int64
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		peak = max(peak, int64(heapInUse())-int64(before))
	}
	t.Logf("heap grew by at most %d KiB with %d stalled requests open", peak>>10, len(open))
	if peak > 16<<20 {
		t.Errorf("heap grew by %d MiB under the flood, want under 16 MiB", peak>>20)
	}

	// While the attackers still hold their connections, a genuine push
	// gets through at once.
	body := pushBody("refs/heads/main")
	req, _ := http.NewRequest(http.MethodPost, srv.URL+Path, bytes.NewReader(body))
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature-256", sign(githubSecret, body))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("genuine push: status %d, want 202", resp.StatusCode)
	}
	if got := f.triggered(); len(got) != 1 {
		t.Errorf("triggered %v, want one push", got)
	}
}
