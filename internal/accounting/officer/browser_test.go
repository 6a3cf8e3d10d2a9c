package officer

import (
	"context"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/browsertest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// browser returns a headless Chromium's context whose every request
// carries the officer's token, as the OIDC proxy in front of the page
// would send it.
func browser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.New(t, map[string]string{"Authorization": "Bearer officer"}, 90*time.Second)
}

var shownID = regexp.MustCompile(`req-\d\d`)

// shownRows returns the request ids of the rows every page of the search
// shows as text, following the "Next page" links.
func shownRows(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return browsertest.EveryPage(t, ctx, shownID, "section.status")
}

// search fills in and sends the form, as an officer does.
func search(t *testing.T, ctx context.Context, base, person, purpose string, exempt bool) {
	t.Helper()
	actions := []chromedp.Action{chromedp.Navigate(base + "/officer/person"), chromedp.WaitVisible(`input[name="id"]`, chromedp.ByQuery),
		chromedp.SendKeys(`input[name="id"]`, person, chromedp.ByQuery), chromedp.SetValue(`select[name="purpose"]`, purpose, chromedp.ByQuery)}
	if exempt {
		actions = append(actions, chromedp.Click(`input[name="exempt"]`, chromedp.ByQuery))
	}
	actions = append(actions, chromedp.Click(`button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(`section.status`, chromedp.ByQuery))
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("search: %v", err)
	}
}

func TestOfficerPageInABrowser(t *testing.T) {
	ctx := browser(t)
	f := newOfficerFixture(t, 4)
	srv := httptest.NewServer(f.h)
	defer srv.Close()

	for _, tc := range []struct {
		name, purpose string
		exempt        bool
		keep          func(accountingtest.Disclosure) bool
	}{
		{"default: accountable only", "", false, nil}, // several pages of 4
		{"exempt switch", "", true, nil},
		{"purpose filter", "fraud-review", false, func(d accountingtest.Disclosure) bool { return d.Purpose == "fraud-review" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			search(t, ctx, srv.URL, accountingtest.Persons[2], tc.purpose, tc.exempt)
			var loc string
			if err := chromedp.Run(ctx, chromedp.Location(&loc)); err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(loc)
			if err != nil {
				t.Fatal(err)
			}
			for k := range u.Query() {
				if !slices.Contains(officerParams, k) {
					t.Errorf("the form sent %q in the URL %s", k, loc)
				}
			}
			got, w := shownRows(t, ctx), want(accountingtest.Persons[2], tc.exempt, false, tc.keep)
			if !slices.Equal(got, w) || len(w) == 0 {
				t.Errorf("the pages show %v, want each of %v once, in order", got, w)
			}
		})
	}

	// The stylesheet applies under the Content-Security-Policy.
	var bg string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`getComputedStyle(document.querySelector("header")).backgroundColor`, &bg)); err != nil {
		t.Fatal(err)
	}
	if bg != "rgb(31, 58, 95)" {
		t.Errorf("the header's background is %q: the stylesheet did not apply", bg)
	}
	screenshot(t, ctx, srv.URL+"/officer/person?id="+accountingtest.Persons[0]+"&exempt=1")
}

// screenshot takes a screenshot of the page at target; with
// UPDATE_SCREENSHOTS=1 it is written to docs/images/officer-person.png.
func screenshot(t *testing.T, ctx context.Context, target string) {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.Navigate(target)); err != nil {
		t.Fatal(err)
	}
	keepScreenshot(t, ctx, "table.disclosures", "officer-person.png")
}

// keepScreenshot takes a screenshot of the page shown, once selector is
// visible; with UPDATE_SCREENSHOTS=1 it is written to the folder
// docs/images, named file.
func keepScreenshot(t *testing.T, ctx context.Context, selector, file string) {
	t.Helper()
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Screenshot(t, ctx, selector, filepath.Join(root, "docs/images", file))
}
