package dashboard

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
)

// getWithHost fetches / from ts as a browser would after resolving host to
// the dashboard's address.
func getWithHost(t *testing.T, url, host string, headers ...string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestTokenlessDashboardAnswersLoopbackNamesOnly: DNS rebinding points a
// name the attacker owns at 127.0.0.1, so a page of theirs reads the
// dashboard as same-origin. Without a token the dashboard answers only
// requests that name it by a loopback name; with a token, any name.
func TestTokenlessDashboardAnswersLoopbackNamesOnly(t *testing.T) {
	_, ts := newTestServer(t, newMemStore(), nil)
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "localhost", "LOCALHOST:" + port, "127.0.0.1"} {
		if code := getWithHost(t, ts.URL, host); code != http.StatusOK {
			t.Errorf("Host %s: status %d, want 200", host, code)
		}
	}
	for _, host := range []string{"rebind.attacker.example:" + port, "rebind.attacker.example", "localhost.attacker.example:" + port,
		"10.0.0.1:" + port, "127.0.0.1.nip.io:" + port} {
		if code := getWithHost(t, ts.URL, host); code != http.StatusForbidden {
			t.Errorf("Host %s: status %d, want 403", host, code)
		}
	}
	// A user header does not stand in for the token: a rebound page can
	// set any header it likes.
	_, proxied := newTestServer(t, newMemStore(), func(o *Options) { o.UserHeader = "X-Forwarded-User" })
	if code := getWithHost(t, proxied.URL, "rebind.attacker.example", "X-Forwarded-User", "mallory"); code != http.StatusForbidden {
		t.Errorf("user header, foreign Host: status %d, want 403", code)
	}
	_, tokened := newTestServer(t, newMemStore(), func(o *Options) { o.Token = "s3cret" })
	if code := getWithHost(t, tokened.URL, "dashboard.example.com", "Authorization", "Bearer s3cret"); code != http.StatusOK {
		t.Errorf("token, any Host: status %d, want 200", code)
	}
}

// TestRequireToken: the dashboard may go without a token on a loopback
// address only.
func TestRequireToken(t *testing.T) {
	for _, tt := range []struct {
		addr  string
		token string
		ok    bool
	}{
		{"127.0.0.1:8080", "", true},
		{"[::1]:8080", "", true},
		{"0.0.0.0:8080", "", false},
		{"[::]:8080", "", false},
		{"10.1.2.3:8080", "", false},
		{"0.0.0.0:8080", "t", true},
	} {
		addr, err := net.ResolveTCPAddr("tcp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		err = RequireToken(addr, Options{Token: tt.token, UserHeader: "X-Forwarded-User"})
		if (err == nil) != tt.ok {
			t.Errorf("%s with token %q: %v, want ok=%v", tt.addr, tt.token, err, tt.ok)
		}
		if err != nil && (!errors.Is(err, ErrTokenRequired) || !strings.Contains(err.Error(), tt.addr)) {
			t.Errorf("%s: error %v, want ErrTokenRequired naming the address", tt.addr, err)
		}
	}
}
