// Package reporttest opens report pages in a real browser (Debian's
// chromium, driven through the DevTools protocol by chromedp) for tests:
// it measures every chart, collects console errors and uncaught exceptions,
// records every network request, and takes a screenshot.
package reporttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TB is the part of testing.TB the checks use; *testing.T and Ginkgo's
// GinkgoT() both satisfy it.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Skip(args ...any)
	TempDir() string
}

// browsers are the executables tried, in order.
var browsers = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Browser returns the path of a Chromium-family browser. Without one it
// skips the test, except in CI (CI=true), where a missing browser fails it:
// .ci/run installs chromium.
func Browser(t TB) string {
	t.Helper()
	for _, b := range browsers {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	msg := "no chromium on this machine (tried " + strings.Join(browsers, ", ") + "); install it with `apt-get install -y chromium` to run the browser test"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: .ci/run installs it, so this is a failure)")
	}
	t.Skip(msg)
	return ""
}

// The window pages are opened in: a laptop screen. The first chart must
// show in it without scrolling (see Check).
const (
	WindowWidth  = 1400
	WindowHeight = 900
)

// Chart is one chart as the browser laid it out.
type Chart struct {
	Label         string
	Width, Height float64
	// Top and Bottom are the chart's edges in CSS pixels from the top of
	// the page, as laid out before any scrolling.
	Top, Bottom float64
	// HasTable reports whether the chart's section holds a table of its
	// numbers with at least one row.
	HasTable bool
}

// Result is what the browser saw of one page.
type Result struct {
	Charts []Chart
	// ConsoleErrors are console messages of level error, log entries of
	// level error and uncaught exceptions.
	ConsoleErrors []string
	// Requests are the URLs the page requested besides itself.
	Requests []string
	// Screenshot is the path of the full-page PNG.
	Screenshot string
}

// Open loads the HTML file page in a fresh headless browser, waits for it
// to load, and reports what it saw; the screenshot goes to screenshot.
func Open(t TB, page, screenshot string) Result {
	t.Helper()
	pageURL, ctx, cancel := openBrowser(t, page)
	defer cancel()

	var mu sync.Mutex
	var res Result
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				res.ConsoleErrors = append(res.ConsoleErrors, "console."+string(e.Type)+": "+argsText(e.Args))
			}
		case *runtime.EventExceptionThrown:
			res.ConsoleErrors = append(res.ConsoleErrors, "exception: "+(&chromedp.ExceptionError{ExceptionDetails: e.ExceptionDetails}).Error())
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				res.ConsoleErrors = append(res.ConsoleErrors, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			if e.Request.URL != pageURL {
				res.Requests = append(res.Requests, e.Request.URL)
			}
		}
	}); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatalf("chromium on %s: %v", page, err)
	}
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]Chart](measureJS))
	if err != nil {
		t.Fatalf("chromium measuring the charts of %s: %v", page, err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("chromium screenshot of %s: %v", page, err)
	}
	if err := os.WriteFile(screenshot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	res.Charts, res.Screenshot = charts, screenshot
	return res
}

// measureJS lays out every chart and reports its size, its position on
// the page and whether its section has a table with rows. The page has not
// been scrolled, so the client rectangle is the page position.
const measureJS = `Array.from(document.querySelectorAll("svg.chart")).map(s => {
  const r = s.getBoundingClientRect();
  const sec = s.closest("section");
  const rows = sec ? sec.querySelectorAll("table tbody tr").length : 0;
  return {Label: s.getAttribute("aria-label") || "", Width: r.width, Height: r.height,
    Top: r.top + window.scrollY, Bottom: r.bottom + window.scrollY, HasTable: rows > 0};
})`

func argsText(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		if len(a.Value) > 0 {
			parts = append(parts, string(a.Value))
		} else {
			parts = append(parts, a.Description)
		}
	}
	return strings.Join(parts, " ")
}

// Check opens page and fails the test unless it shows at least minCharts
// charts, each laid out with a non-zero size and followed by a table, with
// no console error and no network request, and unless at least the upper
// half of the first chart is in the first screen of the window (a reader
// sees results before scrolling). It returns the result.
func Check(t TB, page, screenshot string, minCharts int) Result {
	t.Helper()
	res := Open(t, page, screenshot)
	if len(res.Charts) < minCharts {
		t.Errorf("%s: %d charts rendered, want at least %d", page, len(res.Charts), minCharts)
	}
	if len(res.Charts) > 0 && !UpperHalfInFirstScreen(res.Charts[0]) {
		c := res.Charts[0]
		t.Errorf("%s: the first chart %q spans %.0f..%.0f px; its upper half must lie within the first screen (0..%d px of a %dx%d window)",
			page, c.Label, c.Top, c.Bottom, WindowHeight, WindowWidth, WindowHeight)
	}
	for _, c := range res.Charts {
		if c.Width <= 0 || c.Height <= 0 {
			t.Errorf("%s: chart %q rendered %.0fx%.0f", page, c.Label, c.Width, c.Height)
		}
		if !c.HasTable {
			t.Errorf("%s: chart %q has no table of its numbers", page, c.Label)
		}
	}
	for _, e := range res.ConsoleErrors {
		t.Errorf("%s: console error: %s", page, e)
	}
	for _, r := range res.Requests {
		t.Errorf("%s: network request: %s", page, r)
	}
	return res
}

// UpperHalfInFirstScreen reports whether the upper half of c lies within
// the first WindowHeight pixels of the page.
func UpperHalfInFirstScreen(c Chart) bool {
	return c.Top >= 0 && c.Height > 0 && c.Top+(c.Bottom-c.Top)/2 <= WindowHeight
}

// String summarises a result for logs.
func (r Result) String() string {
	first := ""
	if len(r.Charts) > 0 {
		first = fmt.Sprintf(" (the first at %.0f..%.0f px)", r.Charts[0].Top, r.Charts[0].Bottom)
	}
	return fmt.Sprintf("%d charts%s, %d console errors, %d requests, screenshot %s", len(r.Charts), first, len(r.ConsoleErrors), len(r.Requests), r.Screenshot)
}

// SectionShot saves a PNG of one element of page (a CSS selector such as
// "#schedule-history"), for a person to look at.
func SectionShot(t TB, page, selector, png string) {
	t.Helper()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(Browser(t)), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(WindowWidth, WindowHeight), chromedp.UserDataDir(t.TempDir()))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate((&url.URL{Scheme: "file", Path: abs}).String())); err != nil {
		t.Fatal(err)
	}
	b, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(selector)))
	if err != nil {
		t.Fatalf("screenshot of %s in %s: %v", selector, page, err)
	}
	if err := os.WriteFile(png, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Followed is what the browser saw after following a link.
type Followed struct {
	// WasFolded reports whether the link lay in a closed <details> before
	// its summaries were clicked.
	WasFolded bool
	// URL is the page the link led to; Text is its body's text as shown.
	URL, Text string
	// Requests are the URLs requested besides the two pages;
	// ConsoleErrors as in Result.
	Requests, ConsoleErrors []string
}

// FollowLink opens page, finds the first element matching the CSS selector
// link, unfolds the <details> around it by clicking their summaries as a
// reader does (outermost first), clicks the link, waits for an element
// matching ready on the page it leads to, and reports what that page shows.
func FollowLink(t TB, page, link, ready string) Followed {
	t.Helper()
	pageURL, ctx, cancel := openBrowser(t, page)
	defer cancel()

	var mu sync.Mutex
	var res Followed
	var requests []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			res.ConsoleErrors = append(res.ConsoleErrors, "exception: "+(&chromedp.ExceptionError{ExceptionDetails: e.ExceptionDetails}).Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				res.ConsoleErrors = append(res.ConsoleErrors, "console.error: "+argsText(e.Args))
			}
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		}
	}); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatalf("chromium on %s: %v", page, err)
	}
	// The summaries of the closed <details> around the link, outermost
	// first, marked so that they can be clicked by selector.
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(() => {
  const a = document.querySelector(`+strconvQuote(link)+`);
  if (!a) return -1;
  const closed = [];
  for (let d = a.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) {
    if (!d.open) closed.unshift(d);
  }
  closed.forEach((d, i) => d.querySelector(":scope > summary").setAttribute("data-reporttest-fold", String(i)));
  return closed.length;
})()`))
	if err != nil {
		t.Fatalf("chromium finding %s in %s: %v", link, page, err)
	}
	if n < 0 {
		t.Fatalf("%s: no element matches %s", page, link)
	}
	res.WasFolded = n > 0
	for i := range n {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`summary[data-reporttest-fold="%d"]`, i)))); err != nil {
			t.Fatalf("chromium unfolding the section around %s in %s: %v", link, page, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(link)), chromedp.WaitReady(chromedp.CSS(ready))); err != nil {
		t.Fatalf("chromium following %s from %s to %s: %v", link, page, ready, err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.location.href`))
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	res.URL, res.Text = loc, text
	for _, r := range requests {
		if r != pageURL && r != loc {
			res.Requests = append(res.Requests, r)
		}
	}
	return res
}

// strconvQuote quotes s as a JavaScript string literal (JSON's quoting is
// JavaScript's).
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// openBrowser starts a fresh headless browser with the report's window
// size and returns page's file URL and a context of the browser, bounded to
// two minutes; cancel stops the browser.
func openBrowser(t TB, page string) (pageURL string, ctx context.Context, cancel func()) {
	t.Helper()
	exe := Browser(t)
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	pageURL = (&url.URL{Scheme: "file", Path: abs}).String()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // tests run as root in CI containers
		chromedp.DisableGPU,
		chromedp.WindowSize(WindowWidth, WindowHeight),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(bctx, 2*time.Minute)
	return pageURL, ctx, func() { cancelT(); cancelB(); cancelA() }
}
