package officer

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// recipientSearch is a search by recipient as an officer fills in the
// form: "" leaves a field as it is.
type recipientSearch struct {
	client, subject, from, to, purpose string
	exempt                             bool
}

// fill fills in and sends the form of the search by recipient.
func (s recipientSearch) fill(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	actions := []chromedp.Action{chromedp.Navigate(base + "/officer/recipient"), chromedp.WaitVisible(`select[name="client"]`, chromedp.ByQuery),
		chromedp.SetValue(`select[name="client"]`, s.client, chromedp.ByQuery), chromedp.SetValue(`select[name="purpose"]`, s.purpose, chromedp.ByQuery)}
	if s.subject != "" {
		actions = append(actions, chromedp.SendKeys(`input[name="subject"]`, s.subject, chromedp.ByQuery))
	}
	for name, v := range map[string]string{"from": s.from, "to": s.to} {
		if v != "" {
			actions = append(actions, chromedp.SetValue(`input[name="`+name+`"]`, v, chromedp.ByQuery))
		}
	}
	if s.exempt {
		actions = append(actions, chromedp.Click(`input[name="exempt"]`, chromedp.ByQuery))
	}
	actions = append(actions, chromedp.Click(`button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(`section.status`, chromedp.ByQuery))
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("search: %v", err)
	}
}

func TestRecipientPageInABrowser(t *testing.T) {
	ctx := browser(t)
	f := newOfficerFixture(t, 4)
	srv := httptest.NewServer(f.h)
	defer srv.Close()

	for _, tc := range []struct {
		name   string
		search recipientSearch
		keep   func(accountingtest.Disclosure) bool
		exempt bool
	}{
		{"a client: accountable only", recipientSearch{client: "billing-app"}, func(d accountingtest.Disclosure) bool { return d.Client == "billing-app" }, false},
		{"a client, exempt, a purpose", recipientSearch{client: "billing-app", purpose: "TREAT", exempt: true},
			func(d accountingtest.Disclosure) bool { return d.Client == "billing-app" && d.Purpose == "TREAT" }, true},
		{"a client over a day", recipientSearch{client: "billing-app", from: "2026-11-02", to: "2026-11-02"},
			func(d accountingtest.Disclosure) bool { return d.Client == "billing-app" && d.I >= 24 && d.I < 48 }, false},
		{"a subject", recipientSearch{subject: "clerk-15"}, func(d accountingtest.Disclosure) bool { return d.Subject == "clerk-15" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.search.fill(t, ctx, srv.URL)
			var loc string
			if err := chromedp.Run(ctx, chromedp.Location(&loc)); err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(loc)
			if err != nil {
				t.Fatal(err)
			}
			for k := range u.Query() {
				if !slices.Contains(recipientParams, k) {
					t.Errorf("the form sent %q in the URL %s", k, loc)
				}
			}
			got, w := shownRows(t, ctx), wantRecipient(tc.exempt, false, tc.keep)
			if !slices.Equal(got, w) || len(w) == 0 {
				t.Errorf("the pages show %v, want each of %v once, in order", got, w)
			}
		})
	}

	t.Run("the recipient above the table, a person's link", func(t *testing.T) {
		recipientSearch{client: "billing-app"}.fill(t, ctx, srv.URL)
		var above, person string
		if err := chromedp.Run(ctx, chromedp.Text("section.recipients", &above, chromedp.ByQuery),
			chromedp.Click(`table.disclosures tbody tr:first-child a`, chromedp.ByQuery), chromedp.WaitVisible(`section.status`, chromedp.ByQuery),
			chromedp.Text("section.status", &person, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(above, "Northwind Billing Services LLC, 100 Main Street, Springfield, IL 62701") {
			t.Errorf("above the table: %q, want billing-app's organisation and address", above)
		}
		if w := wantRecipient(false, false, func(d accountingtest.Disclosure) bool { return d.Client == "billing-app" }); !strings.Contains(person, "Person "+personOf(w[0])) {
			t.Errorf("the first row's link led to %q, want the page of %s", person, personOf(w[0]))
		}
	})

	t.Run("printed: no form, no links between pages", func(t *testing.T) {
		recipientSearch{client: "billing-app"}.fill(t, ctx, srv.URL)
		var form, sw, table string
		if err := chromedp.Run(ctx, emulation.SetEmulatedMedia().WithMedia("print"),
			chromedp.Evaluate(`getComputedStyle(document.querySelector("form.search")).display`, &form),
			chromedp.Evaluate(`getComputedStyle(document.querySelector("nav.switch")).display`, &sw),
			chromedp.Evaluate(`getComputedStyle(document.querySelector("table.disclosures")).display`, &table),
			emulation.SetEmulatedMedia().WithMedia("")); err != nil {
			t.Fatal(err)
		}
		if form != "none" || sw != "none" || table == "none" {
			t.Errorf("printed: the form's display %q, the switch's %q, the table's %q; want the form and switch hidden, the table shown", form, sw, table)
		}
	})
	recipientScreenshot(t, ctx, srv.URL+"/officer/recipient?client=billing-app&exempt=1")
}

// personOf returns the person of the fixture's disclosure of request id.
func personOf(requestID string) string {
	for _, d := range accountingtest.Disclosures() {
		if d.RequestID() == requestID {
			return d.Person
		}
	}
	return ""
}

// recipientScreenshot takes a screenshot of the page at target; with
// UPDATE_SCREENSHOTS=1 it is written to docs/images/officer-recipient.png.
func recipientScreenshot(t *testing.T, ctx context.Context, target string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.Navigate(target), chromedp.WaitVisible("table.disclosures", chromedp.ByQuery),
		chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	if len(png) < 1000 || string(png[1:4]) != "PNG" {
		t.Fatalf("screenshot of %d bytes, not a PNG", len(png))
	}
	if os.Getenv("UPDATE_SCREENSHOTS") == "" {
		return
	}
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "docs/images/officer-recipient.png"), png, 0o644); err != nil { //nolint:gosec // G306: a document of the repository
		t.Fatal(err)
	}
}
