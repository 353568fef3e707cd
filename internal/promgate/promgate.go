// Package promgate asks a Prometheus server whether a rollout wave's gate
// holds: the query is written like an alert's expression, and the gate
// fails while it returns any sample. The server's URL and credentials come
// from the controller's flags, never from Git; the query comes from Git, so
// each answer is bounded in time and size and anything but a well-formed
// success answer counts as "not known to pass".
package promgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Limits bound one query.
const (
	// MaxQuery bounds the query's length after the cluster is put in.
	MaxQuery = 4096
	// MaxResponse bounds the answer read.
	MaxResponse = 1 << 20
	// Timeout bounds one query, round trip included; Prometheus is told
	// the same.
	Timeout = 10 * time.Second
)

// Client queries one Prometheus server.
type Client struct {
	// URL is the server's base URL (https://prometheus.example:9090).
	URL string
	// Token, when set, is sent as a bearer token.
	Token string
	// HTTP is the client to use; nil for one with Timeout.
	HTTP *http.Client
}

// ClusterPlaceholder in a query stands for the cluster's name, quoted as
// a PromQL string literal needs (so a query selects with cluster="…").
const ClusterPlaceholder = "{{cluster}}"

// Expand puts cluster in query. The name is a Cluster name (a DNS label
// the loader checked); it is escaped all the same.
func Expand(query, cluster string) string {
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(cluster)
	return strings.ReplaceAll(query, ClusterPlaceholder, esc)
}

// Failing runs query and reports whether it returned any sample (a
// non-zero scalar counts as one). An error means the gate cannot be
// judged: the caller counts the cluster as not healthy.
func (c *Client) Failing(ctx context.Context, query string) (bool, error) {
	if len(query) > MaxQuery {
		return false, fmt.Errorf("the gate's query is %d bytes, more than %d", len(query), MaxQuery)
	}
	base, err := url.Parse(c.URL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return false, fmt.Errorf("the Prometheus URL %q is not an http(s) URL", c.URL)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	form := url.Values{"query": {query}, "timeout": {strconv.Itoa(int(Timeout/time.Second)) + "s"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base.String(), "/")+"/api/v1/query", strings.NewReader(form.Encode()))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, fmt.Errorf("the gate's query failed: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	if err != nil {
		return false, fmt.Errorf("the gate's answer could not be read: %w", err)
	}
	if len(body) > MaxResponse {
		return false, fmt.Errorf("the gate's answer is larger than %d bytes", MaxResponse)
	}
	return judge(resp.StatusCode, body)
}

// answer is the part of Prometheus's query answer the gate reads.
type answer struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

// judge reads an answer: failing when a vector or matrix has any series,
// or a scalar is not zero.
func judge(code int, body []byte) (bool, error) {
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		return false, fmt.Errorf("the gate's answer (HTTP %d) is not Prometheus's JSON: %w", code, err)
	}
	if a.Status != "success" {
		msg := a.Error
		if msg == "" {
			msg = fmt.Sprintf("status %q", a.Status)
		}
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return false, fmt.Errorf("the gate's query failed (HTTP %d, %s): %s", code, a.ErrorType, msg)
	}
	switch a.Data.ResultType {
	case "vector", "matrix":
		var series []json.RawMessage
		if err := json.Unmarshal(a.Data.Result, &series); err != nil {
			return false, fmt.Errorf("the gate's %s answer is malformed: %w", a.Data.ResultType, err)
		}
		return len(series) > 0, nil
	case "scalar":
		var v []any
		if err := json.Unmarshal(a.Data.Result, &v); err != nil || len(v) != 2 {
			return false, errors.New("the gate's scalar answer is malformed")
		}
		s, ok := v[1].(string)
		if !ok {
			return false, errors.New("the gate's scalar answer is malformed")
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return false, fmt.Errorf("the gate's scalar answer is malformed: %w", err)
		}
		return f != 0, nil
	}
	return false, fmt.Errorf("the gate's answer has result type %q; write the query to return a vector", a.Data.ResultType)
}
