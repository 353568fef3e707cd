package dashboard

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
)

// page is what the layout needs, with the page's own data in Body.
type page struct {
	Title string
	Nav   string
	ETag  string
	Snap  *Snapshot
	Body  any
}

var funcs = template.FuncMap{
	"short": workv1alpha1.DisplayRevision,
	"join":  strings.Join,
	"ago": func(now time.Time, t *time.Time) string {
		if t == nil || t.IsZero() {
			return "never"
		}
		return agoText(now.Sub(*t))
	},
	"utc":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"duration": agoText,
	"soakLeft": func(end *time.Time, now time.Time) string { return agoText(end.Sub(now)) },
	"lower":    strings.ToLower,
	"list":     func(v ...string) []string { return v },
	"first":    func(v []string, n int) []string { return v[:min(n, len(v))] },
}

// agoText rounds d for people: 45s, 12m, 3h, 2d.
func agoText(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d"
}

// etag names one response: the records' version and the request's URL
// (its query chooses the rows).
func etag(snap *Snapshot, r *http.Request) string {
	return `"` + hashOf(snap.Version, r.URL.RequestURI()) + `"`
}

// notModified answers 304 when the client holds the current version.
func notModified(w http.ResponseWriter, r *http.Request, tag string) bool {
	w.Header().Set("ETag", tag)
	w.Header().Set("Cache-Control", "no-cache")
	for _, t := range strings.Split(r.Header.Get("If-None-Match"), ",") {
		if strings.TrimSpace(t) == tag {
			w.WriteHeader(http.StatusNotModified)
			return true
		}
	}
	return false
}

// servePage renders one page; build is called only when the client does
// not already hold this version.
func (s *Server) servePage(w http.ResponseWriter, r *http.Request, name, title string, build func(*Snapshot) (any, int)) {
	snap := s.Current()
	tag := etag(snap, r)
	if notModified(w, r, tag) {
		return
	}
	body, code := build(snap)
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", page{Title: title, Nav: name, ETag: tag, Snap: snap, Body: body}); err != nil {
		s.opts.Log.Error(err, "failed to render a page", "page", name)
		http.Error(w, "failed to render the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// reportJSON serves the report `propagit status -o json` prints.
func (s *Server) reportJSON(w http.ResponseWriter, r *http.Request) {
	snap := s.Current()
	// The report carries the controller's heartbeat, which moves without
	// changing the pages' Version.
	tag := `"` + hashOf(snap.Version, r.URL.RequestURI(), snap.Recorder.Heartbeat.Format(time.RFC3339Nano)) + `"`
	if notModified(w, r, tag) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(snap.Report)
}

// pager is one page of a table.
type pager struct {
	Page, Pages, Total, From, To int
	Prev, Next                   string
}

// paginate returns the bounds of the page r asks for (?page=N, from 1) of
// total rows, and the links to its neighbours.
func paginate(r *http.Request, total, size int) pager {
	p := pager{Total: total, Pages: max(1, (total+size-1)/size), Page: 1}
	if n, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && n > 1 {
		p.Page = min(n, p.Pages)
	}
	p.From = min((p.Page-1)*size, total)
	p.To = min(p.From+size, total)
	link := func(n int) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(n))
		return (&url.URL{Path: r.URL.Path, RawQuery: q.Encode()}).String()
	}
	if p.Page > 1 {
		p.Prev = link(p.Page - 1)
	}
	if p.Page < p.Pages {
		p.Next = link(p.Page + 1)
	}
	return p
}

// sortLink is the URL of the same view sorted by key, flipping the order
// when it is already sorted by key.
func sortLink(r *http.Request, key string) string {
	q := r.URL.Query()
	desc := q.Get("sort") == key && q.Get("order") != "desc"
	q.Set("sort", key)
	q.Del("page")
	if desc {
		q.Set("order", "desc")
	} else {
		q.Del("order")
	}
	return (&url.URL{Path: r.URL.Path, RawQuery: q.Encode()}).String()
}

// column is a sortable column header.
type column struct {
	Key, Label, Link string
	// Sort is the aria-sort value: ascending, descending or none.
	Sort string
}

func columns(r *http.Request, keyLabels ...string) []column {
	var out []column
	q := r.URL.Query()
	for i := 0; i+1 < len(keyLabels); i += 2 {
		c := column{Key: keyLabels[i], Label: keyLabels[i+1], Link: sortLink(r, keyLabels[i]), Sort: "none"}
		if q.Get("sort") == c.Key {
			c.Sort = "ascending"
			if q.Get("order") == "desc" {
				c.Sort = "descending"
			}
		}
		out = append(out, c)
	}
	return out
}
