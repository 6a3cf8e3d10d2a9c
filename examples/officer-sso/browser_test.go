//go:build integration

package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// chromium returns the path of a Chromium to drive. Without one the test
// is skipped on a developer's machine, and fails when CI is set: a
// skipped browser test must never pass for one that ran.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed, and CI is set: the browser tests must run (.ci/run installs Debian's chromium)")
	}
	t.Skip("chromium is not installed (apt-get install chromium); in CI this fails")
	return ""
}

// browser is a headless Chromium that remembers every URL it asked for
// and the status of each document it loaded.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	asked    []string
	statuses map[string]int64 // document URL -> its last status
}

func newBrowser(t *testing.T, path string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path),
		chromedp.NoSandbox, chromedp.DisableGPU)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	b := &browser{ctx: ctx, statuses: map[string]int64{}}
	chromedp.ListenTarget(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.asked = append(b.asked, e.Request.URL)
		case *network.EventResponseReceived:
			if e.Type == network.ResourceTypeDocument {
				b.statuses[e.Response.URL] = e.Response.Status
			}
		}
	})
	b.run(t, network.Enable())
	return b
}

func (b *browser) run(t *testing.T, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

func (b *browser) navigate(url string) chromedp.Action {
	return chromedp.Navigate(url)
}

// bodyText reads the text the page shows.
func (b *browser) bodyText(text *string) chromedp.Action {
	return chromedp.Text("body", text, chromedp.ByQuery)
}

func (b *browser) html(t *testing.T) string {
	t.Helper()
	var s string
	b.run(t, chromedp.OuterHTML("html", &s, chromedp.ByQuery))
	return s
}

func (b *browser) location(t *testing.T) string {
	t.Helper()
	var loc string
	b.run(t, chromedp.Location(&loc))
	return loc
}

// status returns the status the document at url last answered (0: none).
func (b *browser) status(url string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.statuses[url]
}

// urls returns every URL the browser asked for, redirects included.
func (b *browser) urls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.asked...)
}

// signIn opens page, which must send the browser to the identity
// provider's login page at idp, picks user there, and waits until the
// browser is back at page.
func (b *browser) signIn(t *testing.T, page, idp, user string) {
	t.Helper()
	button := `button[value="` + user + `"]`
	b.run(t, b.navigate(page), chromedp.WaitVisible(button, chromedp.ByQuery))
	if loc := b.location(t); !strings.HasPrefix(loc, idp+"/oidc/authorize?") {
		t.Fatalf("%s led to %s, not to the identity provider's login page", page, loc)
	}
	b.run(t, chromedp.Click(button, chromedp.ByQuery))
	waitFor(t, "the way back to "+page, 30*time.Second, func() bool { return b.location(t) == page })
	b.run(t, chromedp.WaitReady("body", chromedp.ByQuery))
}
