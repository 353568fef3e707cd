package promgate

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func server(t *testing.T, h http.HandlerFunc) *Client {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return &Client{URL: s.URL, Token: "s3cret"}
}

func answerWith(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}
}

func TestRolloutGateAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		failing    bool
		err        string
	}{
		{"empty vector passes", `{"status":"success","data":{"resultType":"vector","result":[]}}`, false, ""},
		{"a series fails", `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"0.2"]}]}}`, true, ""},
		{"zero scalar passes", `{"status":"success","data":{"resultType":"scalar","result":[1,"0"]}}`, false, ""},
		{"non-zero scalar fails", `{"status":"success","data":{"resultType":"scalar","result":[1,"3"]}}`, true, ""},
		{"query error", `{"status":"error","errorType":"bad_data","error":"parse error at char 5"}`, false, "bad_data"},
		{"not JSON", `<html>login</html>`, false, "not Prometheus's JSON"},
		{"string result", `{"status":"success","data":{"resultType":"string","result":[1,"x"]}}`, false, `result type "string"`},
		{"malformed vector", `{"status":"success","data":{"resultType":"vector","result":{"a":1}}}`, false, "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := server(t, answerWith(tc.body))
			failing, err := c.Failing(context.Background(), "up == 0")
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("err %v, want one saying %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatal(err)
			case failing != tc.failing:
				t.Fatalf("failing %v, want %v", failing, tc.failing)
			}
		})
	}
}

// A hostile or broken server is refused quickly: an oversized answer, a
// slow one, a redirect elsewhere (the token never follows it).
func TestRolloutGateHostileServer(t *testing.T) {
	big := server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[` + strings.Repeat(`{"metric":{},"value":[1,"1"]},`, 80000) + `]}}`))
	})
	if _, err := big.Failing(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a 2 MB answer: err %v", err)
	}

	slow := server(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := slow.Failing(ctx, "x"); err == nil {
		t.Error("a server that never answers: no error")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the slow server held the gate %s", d)
	}

	var leaked string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { leaked = r.Header.Get("Authorization") }))
	defer elsewhere.Close()
	redirect := server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/api/v1/query", http.StatusTemporaryRedirect)
	})
	if _, err := redirect.Failing(context.Background(), "x"); err == nil {
		t.Error("a redirect was followed as an answer")
	}
	if leaked != "" {
		t.Errorf("the token followed a redirect: %q", leaked)
	}

	var got, auth string
	c := server(t, func(w http.ResponseWriter, r *http.Request) {
		got, auth = r.FormValue("query"), r.Header.Get("Authorization")
		answerWith(`{"status":"success","data":{"resultType":"vector","result":[]}}`)(w, r)
	})
	q := Expand(`rate(errors{cluster="{{cluster}}"}[5m]) > 0.01`, `eu"1`)
	if _, err := c.Failing(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	if got != `rate(errors{cluster="eu\"1"}[5m]) > 0.01` || auth != "Bearer s3cret" {
		t.Errorf("query %q auth %q", got, auth)
	}
	if _, err := c.Failing(context.Background(), strings.Repeat("x", MaxQuery+1)); err == nil {
		t.Error("an oversized query was sent")
	}
	if _, err := (&Client{URL: "file:///etc/passwd"}).Failing(context.Background(), "x"); err == nil {
		t.Error("a file URL was accepted")
	}
}
