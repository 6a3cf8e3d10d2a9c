package officer

import (
	"context"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/browsertest"
)

// letterInput is what the officer types in the letter's form.
type letterInput struct {
	person, requested, from, paper string
	summary                        bool
}

// writeLetter fills in the letter's form as an officer does (the name
// and address typed, the form posted) and waits for the letter.
func writeLetter(t *testing.T, ctx context.Context, base string, in letterInput) {
	t.Helper()
	actions := []chromedp.Action{chromedp.Navigate(base + "/officer/letter?id=" + in.person), chromedp.WaitVisible(`input[name="name"]`, chromedp.ByQuery),
		chromedp.SetValue(`input[name="requested"]`, in.requested, chromedp.ByQuery),
		chromedp.SetValue(`input[name="from"]`, in.from, chromedp.ByQuery),
		chromedp.SendKeys(`input[name="name"]`, "Ann Example", chromedp.ByQuery),
		chromedp.SendKeys(`textarea[name="address"]`, "12 Elm Street\nSpringfield, IL 62701", chromedp.ByQuery),
		chromedp.SetValue(`select[name="paper"]`, in.paper, chromedp.ByQuery)}
	if in.summary {
		actions = append(actions, chromedp.Click(`input[name="summary"]`, chromedp.ByQuery))
	}
	actions = append(actions, chromedp.Click(`button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(`article.letter`, chromedp.ByQuery))
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("write the letter: %v", err)
	}
	var loc string
	if err := chromedp.Run(ctx, chromedp.Location(&loc)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(loc, "Ann") || strings.Contains(loc, "Elm") || strings.Contains(loc, "?") {
		t.Errorf("the letter's address %s holds what was posted", loc)
	}
}

var pdfPages = regexp.MustCompile(`(?m)^Pages:\s+(\d+)$`)

func TestLetterInABrowser(t *testing.T) {
	ctx := browser(t)
	f := newOfficerFixtureOf(t, 4, accountingtest.Disclosures(), letterheadOf(exampleLetterhead))
	srv := httptest.NewServer(f.h)
	defer srv.Close()

	for _, tc := range []struct {
		paper, size string
	}{
		{"letter", "(letter)"}, // 612 x 792 pts
		{"a4", "(A4)"},         // 595 x 842 pts
	} {
		t.Run(tc.paper, func(t *testing.T) {
			writeLetter(t, ctx, srv.URL, letterInput{person: accountingtest.Persons[1], requested: "2026-11-20", paper: tc.paper})
			text, info := browsertest.PrintPDF(t, ctx)
			if !regexp.MustCompile(`(?m)^Page size:\s+[\d.]+ x [\d.]+ pts ` + regexp.QuoteMeta(tc.size) + `$`).MatchString(info) {
				t.Errorf("pdfinfo:\n%s\nwant the page size %s", info, tc.size)
			}
			m := pdfPages.FindStringSubmatch(info)
			if m == nil || m[1] == "1" {
				t.Fatalf("pdfinfo:\n%s\nwant several pages (the fixture's letter does not fit on one)", info)
			}
			all := browsertest.Words(text)
			for _, s := range []string{"Page 1 of " + m[1], "Page " + m[1] + " of " + m[1], // numbered pages
				"Ann Example 12 Elm Street Springfield, IL 62701", "On 20 November 2026 you asked"} {
				if !strings.Contains(all, s) {
					t.Errorf("the PDF's text lacks %q", s)
				}
			}
			if strings.Contains(all, "This bar is not printed") || strings.Contains(all, "Write another") {
				t.Error("the toolbar is printed")
			}
			checkEntries(t, all, f, accountingtest.Persons[1])
		})
	}

	writeLetter(t, ctx, srv.URL, letterInput{person: accountingtest.Persons[0], requested: "2026-11-20", paper: "letter", summary: true})
	keepScreenshot(t, ctx, "article.letter", "officer-letter.png")

	// On screen the toolbar shows; in print media it does not, and the
	// officer's search form is hidden from a printed page too.
	for _, tc := range []struct{ target, selector string }{
		{"", "nav.toolbar"},
		{"/officer/person?id=" + accountingtest.Persons[1], "form.search"},
		{"/officer/letter?id=" + accountingtest.Persons[1], "form.letter-form"},
	} {
		if tc.target != "" {
			if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+tc.target), chromedp.WaitVisible(tc.selector, chromedp.ByQuery)); err != nil {
				t.Fatal(err)
			}
		}
		var screen, printed string
		style := `getComputedStyle(document.querySelector("` + tc.selector + `")).display`
		if err := chromedp.Run(ctx, chromedp.Evaluate(style, &screen), emulation.SetEmulatedMedia().WithMedia("print"),
			chromedp.Evaluate(style, &printed), emulation.SetEmulatedMedia().WithMedia("")); err != nil {
			t.Fatal(err)
		}
		if screen == "none" || printed != "none" {
			t.Errorf("%s%s: display %q on screen and %q in print; want it shown, then hidden", tc.target, tc.selector, screen, printed)
		}
	}
}

// checkEntries checks that the text of a letter to person holds each of
// their accountable disclosures once, with its date, recipient and
// address, what was disclosed and the purpose (in the words of the
// shipped registries); and no other.
func checkEntries(t *testing.T, text string, f *officerFixture, person string) {
	t.Helper()
	shown := 0
	for _, d := range accountingtest.Disclosures() {
		ref := "Reference " + d.Reference()
		n := strings.Count(text+" ", ref+" ")
		if d.Person != person || !d.Shown(false, false) {
			if n != 0 {
				t.Errorf("the letter lists %s (%s, %s), which is not accountable or not %s's", d.Reference(), d.Op, d.Purpose, person)
			}
			continue
		}
		shown++
		if n != 1 {
			t.Errorf("the letter lists %s %d times, want once", d.Reference(), n)
		}
		what := "social security number (last four digits)"
		if d.I%2 == 0 {
			what += ", date of birth"
		}
		want := []string{longDate(d.Time()), d.Time().Format("15:04 UTC"), what}
		if c, ok := f.registry.Client(d.Client, d.Time()); ok {
			want = append(want, c.Organisation, c.Address)
		} else {
			want = append(want, "A recipient not in our register", "(client "+d.Client+")")
		}
		if p, ok := f.registry.Purpose(d.Purpose); ok {
			want = append(want, p.Statement)
		} else {
			want = append(want, "unknown purpose code "+d.Purpose)
		}
		for _, s := range want {
			if !strings.Contains(text, browsertest.Words(s)) {
				t.Errorf("the letter lacks %q (of %s)", s, d.Reference())
			}
		}
	}
	if shown < 5 {
		t.Fatalf("the fixture gives the person %d accountable disclosures, want several", shown)
	}
}
