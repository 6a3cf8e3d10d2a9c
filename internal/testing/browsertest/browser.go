// Package browsertest drives the pages a person reads in a real browser:
// headless Chromium (Debian's chromium, which .ci/run installs) through
// chromedp, and the PDF it prints read back with poppler's pdftotext and
// pdfinfo. Imported by test files only.
//
// Its contract: without Chromium or poppler a test is skipped on a
// developer's machine and fails when CI is set, so that a skipped browser
// test never passes for one that ran. Each browser ends with its test.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// need returns the path of the first of names installed; without one it
// skips t, or fails it when CI is set.
func need(t testing.TB, pkg string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed, and CI is set: the browser tests must run (.ci/run installs Debian's %s)", names[0], pkg)
	}
	t.Skipf("%s is not installed (apt-get install %s); in CI this fails", names[0], pkg)
	return ""
}

// Chromium returns the path of a Chromium to drive.
func Chromium(t testing.TB) string {
	t.Helper()
	return need(t, "chromium", "chromium", "chromium-browser", "google-chrome")
}

// New returns a headless Chromium's context, of a window of 1400 x 1000,
// whose every request carries headers (the officer's token, as the OIDC
// proxy in front of a page sends it). It ends with t, and its actions
// time out after timeout.
func New(t testing.TB, headers map[string]string, timeout time.Duration) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(Chromium(t)),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	h := network.Headers{}
	for k, v := range headers {
		h[k] = v
	}
	if err := chromedp.Run(ctx, network.Enable(), network.SetExtraHTTPHeaders(h)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// PrintPDF prints the page shown as Chromium does for "Save as PDF" (on
// the page's own paper size), and returns its text (pdftotext) and its
// information (pdfinfo).
func PrintPDF(t testing.TB, ctx context.Context) (text, info string) {
	t.Helper()
	var pdf []byte
	if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		pdf, _, err = page.PrintToPDF().WithPreferCSSPageSize(true).Do(ctx)
		return err
	})); err != nil {
		t.Fatalf("print to PDF: %v", err)
	}
	file := filepath.Join(t.TempDir(), "page.pdf")
	if err := os.WriteFile(file, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		out, err := exec.CommandContext(context.Background(), need(t, "poppler-utils", name), args...).Output() //nolint:gosec // G204: poppler's tools on a file of the test
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return string(out)
	}
	return run("pdftotext", file, "-"), run("pdfinfo", file)
}

// Pages returns the text of each page of text, as pdftotext writes it
// (each page ended by a form feed).
func Pages(text string) []string { return strings.Split(strings.TrimSuffix(text, "\f"), "\f") }

// Words returns s with every run of white space one space.
func Words(s string) string { return strings.Join(strings.Fields(s), " ") }

// Screenshot takes a screenshot of the page shown once selector is
// visible, and with UPDATE_SCREENSHOTS=1 writes it to the file path.
func Screenshot(t testing.TB, ctx context.Context, selector, path string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.WaitVisible(selector, chromedp.ByQuery), chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	if len(png) < 1000 || string(png[1:4]) != "PNG" {
		t.Fatalf("screenshot of %d bytes, not a PNG", len(png))
	}
	if os.Getenv("UPDATE_SCREENSHOTS") == "" {
		return
	}
	if err := os.WriteFile(path, png, 0o644); err != nil { //nolint:gosec // G306: a document of the repository
		t.Fatal(err)
	}
}

// EveryPage returns what ids matches in the text of the page shown's
// main element and of each page after it, following its a[rel="next"]
// link to the last: each next page navigated to as a click does and
// waited for until ready (a selector) is visible on it, not on the page
// still shown. It fails t after maxPages pages.
func EveryPage(t testing.TB, ctx context.Context, ids *regexp.Regexp, ready string) []string {
	t.Helper()
	const maxPages = 100
	var got []string
	for n := 0; ; n++ {
		var text string
		var next []*cdp.Node
		if err := chromedp.Run(ctx, chromedp.Text("main", &text, chromedp.ByQuery),
			chromedp.Nodes(`a[rel="next"]`, &next, chromedp.ByQueryAll, chromedp.AtLeast(0))); err != nil {
			t.Fatal(err)
		}
		got = append(got, ids.FindAllString(text, -1)...)
		if len(next) == 0 {
			return got
		}
		if n == maxPages {
			t.Fatalf("no last page after %d", maxPages)
		}
		var href string
		if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('a[rel="next"]').href`, &href)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Run(ctx, chromedp.Navigate(href), chromedp.WaitVisible(ready, chromedp.ByQuery)); err != nil {
			t.Fatalf("next page %q: %v", href, err)
		}
	}
}
