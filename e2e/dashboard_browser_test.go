package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// browser is one headless Chromium tab on the dashboard.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	allocOpts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 800), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), allocOpts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("failed to start %s: %v", chromiumPath, err)
	}
	return &browser{t: t, ctx: ctx, base: base, dir: t.TempDir()}
}

// browserTimeout bounds one exchange with the browser.
const browserTimeout = 30 * time.Second

// evaluate runs a script in the page and decodes its result.
func evaluate[T any](b *browser, script string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, browserTimeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](script))
}

// open loads path and waits for its live part to be there.
func (b *browser) open(path string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(b.base+path)); err != nil {
		b.t.Fatalf("failed to open %s: %v", path, err)
	}
	b.waitFor("#live", "the page", func(string) bool { return true })
}

// text returns the trimmed text of the first element sel matches, and
// whether there is one.
func (b *browser) text(sel string) (string, bool, error) {
	q, _ := json.Marshal(sel)
	res, err := evaluate[*string](b, fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e ? e.textContent.trim() : null })()`, q))
	if err != nil || res == nil {
		return "", false, err
	}
	return *res, true, nil
}

// waitFor waits until the text of sel satisfies ok.
func (b *browser) waitFor(sel, what string, ok func(string) bool) {
	b.t.Helper()
	eventually(b.t, converge, func() (bool, string) {
		got, found, err := b.text(sel)
		switch {
		case err != nil:
			return false, fmt.Sprintf("%s: %v", sel, err)
		case !found:
			return false, sel + ": not on the page"
		}
		return ok(got), fmt.Sprintf("%s: text %q, want %s", sel, truncateText(got), what)
	})
}

func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	b.waitFor(sel, fmt.Sprintf("%q", want), func(got string) bool { return got == want })
}

func (b *browser) waitContains(sel, want string) {
	b.t.Helper()
	b.waitFor(sel, fmt.Sprintf("one holding %q", want), func(got string) bool { return strings.Contains(got, want) })
}

// html returns the outer HTML of the document.
func (b *browser) html() string {
	b.t.Helper()
	out, err := evaluate[string](b, `document.documentElement.outerHTML`)
	if err != nil {
		b.t.Fatal(err)
	}
	return out
}

// mark sets a variable on the loaded document; checkMarked fails when it
// is gone, which a reload would do.
func (b *browser) mark() {
	b.t.Helper()
	if _, err := evaluate[chromedp.Void](b, `window.propagitMark = 1`); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) checkMarked() {
	b.t.Helper()
	marked, err := evaluate[bool](b, `window.propagitMark === 1`)
	if err != nil {
		b.t.Fatal(err)
	}
	if !marked {
		b.t.Error("the page was reloaded: the update should have come in place")
	}
	// The update says when, in the one zone and format the server writes.
	b.waitFor("#live-status", "the time of the last update in UTC", regexp.MustCompile(`^Updated \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString)
}

// checkKeyboardAndDark checks that the first Tab reaches the skip link,
// and that the dark theme follows the system setting (captured as
// fleet-dark).
func (b *browser) checkKeyboardAndDark() {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.KeyEvent("\t")); err != nil {
		b.t.Fatal(err)
	}
	if focused, err := evaluate[string](b, `document.activeElement.className`); err != nil || focused != "skip" {
		b.t.Errorf("the first Tab focuses %q (%v), want the skip link", focused, err)
	}
	dark := func(on bool) {
		b.t.Helper()
		p := emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}}
		if on {
			p.Features[0].Value = "dark"
		}
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, p); err != nil {
			b.t.Fatal(err)
		}
	}
	if _, err := evaluate[chromedp.Void](b, `document.activeElement.blur()`); err != nil {
		b.t.Fatal(err)
	}
	dark(true)
	if bg, err := evaluate[string](b, `getComputedStyle(document.body).backgroundColor`); err != nil || bg != "rgb(13, 17, 23)" {
		b.t.Errorf("dark system setting: page background %q (%v), want the dark theme's rgb(13, 17, 23)", bg, err)
	}
	b.shot("fleet-dark")
	dark(false)
}

// layoutScript lists what a reader would see as broken on the page: the
// page itself scrolling sideways, a cell whose text runs past its edge
// (not wrapped), and a table column empty in every row.
const layoutScript = `(() => {
  const out = [];
  const root = document.documentElement;
  if (root.scrollWidth > window.innerWidth + 1) out.push("the page scrolls sideways: " + root.scrollWidth + "px wide in " + window.innerWidth);
  for (const table of document.querySelectorAll("table")) {
    const name = table.id || (table.closest("[id]") || {}).id || "a table";
    const heads = [...table.querySelectorAll("thead th")].map(th => th.textContent.trim());
    const rows = [...table.querySelectorAll("tbody tr")].filter(tr => tr.offsetParent !== null);
    for (const td of table.querySelectorAll("tbody td")) {
      if (td.scrollWidth > td.clientWidth + 1) out.push(name + ": a cell's text runs past its edge: " + td.textContent.trim().slice(0, 60));
    }
    if (rows.length === 0) continue;
    heads.forEach((h, i) => {
      if (rows.every(tr => tr.children[i] && tr.children[i].textContent.trim() === "")) out.push(name + ": column " + JSON.stringify(h) + " is empty in every row");
    });
  }
  return out;
})()`

// checkLayout fails the test for each layout fault layoutScript finds on
// the page shown.
func (b *browser) checkLayout(page string) {
	b.t.Helper()
	faults, err := evaluate[[]string](b, layoutScript)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, f := range faults {
		b.t.Errorf("%s page: %s", page, f)
	}
}

// shot saves a 1280×800 screenshot as <name>.png under the test's temp
// dir, and under $PROPAGIT_DASHBOARD_SHOTS when set, and checks the page's
// layout (checkLayout).
func (b *browser) shot(name string) {
	b.t.Helper()
	b.checkLayout(name)
	ctx, cancel := context.WithTimeout(b.ctx, browserTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatal(err)
	}
	dirs := []string{b.dir}
	if d := os.Getenv(dashboardShotsEnv); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		p := filepath.Join(d, name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			b.t.Fatal(err)
		}
		b.t.Logf("screenshot %s", p)
	}
}

func truncateText(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
