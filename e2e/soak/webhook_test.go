package soak

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// webhookToken is the generic trigger's bearer token every replica gets.
const webhookToken = "soak-webhook-token"

// hookClient posts to the replicas' /hooks/git; short timeouts, since a
// replica may be down.
var hookClient = &http.Client{Timeout: 2 * time.Second}

// postHook sends one generic trigger to the replica's /hooks/git with
// token and returns the status code (0 when the request failed).
func postHook(ctx context.Context, p *proc, token string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.metrics+"/hooks/git", strings.NewReader("{}"))
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hookClient.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// notifyAll tells every replica that the branch moved, as a Git host's
// push webhook does; a replica that is down misses it and polls.
func notifyAll(replicas []*proc) {
	for _, p := range replicas {
		go postHook(context.Background(), p, webhookToken)
	}
}

// flood posts triggers to p from eight workers for d: every fourth with
// the right token, the others with a wrong one. It returns the count of
// each status code (0: the request failed).
func flood(p *proc, d time.Duration) map[int]int {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	codes := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				token := "wrong-token"
				if (i+w)%4 == 0 {
					token = webhookToken
				}
				code := postHook(ctx, p, token)
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return codes
}

// codesString prints status counts in a stable order.
func codesString(codes map[int]int) string {
	m := map[string]int{}
	for c, n := range codes {
		m[fmt.Sprint(c)] = n
	}
	return counts(m)
}
