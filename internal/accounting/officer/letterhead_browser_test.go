package officer

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/browsertest"
)

// TestLetterheadInABrowser: with the letterhead set, its text is shown
// on the letter in the browser and printed on the PDF's first page; with
// it unset, the letter still prints, and the notice naming the settings
// is shown on screen but neither in print media nor in the PDF.
func TestLetterheadInABrowser(t *testing.T) {
	ctx := browser(t)
	notice := "set " + strings.Join(unsetLetterhead, ", ") + " for lookupd audit serve"
	tests := []struct {
		name         string
		head         Letterhead
		shown        []string // on the screen's letter and the PDF's first page
		screenOnly   []string // in the page shown, not in the PDF
		printedNever []string // neither in the letter shown nor in the PDF
	}{
		{
			name:         "letterhead",
			head:         exampleLetterhead,
			shown:        []string{"Example & Sons Health Plan 1 Main Street Suite 200 Springfield, IL 62701 Privacy officer: Jo Roe, privacy@example.org, 555 0100"},
			printedNever: []string{"This notice is not printed"},
		},
		{
			name:         "unset",
			head:         Letterhead{Unset: unsetLetterhead},
			screenOnly:   []string{notice},
			printedNever: []string{"Privacy officer:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newOfficerFixtureOf(t, 10, accountingtest.Disclosures(), letterheadOf(tt.head))
			srv := httptest.NewServer(f.h)
			defer srv.Close()
			writeLetter(t, ctx, srv.URL, letterInput{person: accountingtest.Persons[1], requested: "2026-11-20", paper: "letter"})
			var letter, page string
			if err := chromedp.Run(ctx, chromedp.Text("article.letter", &letter, chromedp.ByQuery), chromedp.Text("body", &page, chromedp.ByQuery)); err != nil {
				t.Fatal(err)
			}
			letter, page = browsertest.Words(letter), browsertest.Words(page)
			text, _ := browsertest.PrintPDF(t, ctx)
			pages := browsertest.Pages(text)
			first, all := browsertest.Words(pages[0]), browsertest.Words(text)
			if !strings.Contains(first, "Ann Example 12 Elm Street") || !strings.Contains(all, "Page 1 of") {
				t.Fatalf("the PDF's first page is not the letter's:\n%s", first)
			}
			for _, s := range tt.shown {
				if !strings.Contains(letter, s) {
					t.Errorf("the letter shown lacks %q:\n%s", s, letter)
				}
				if !strings.Contains(first, s) {
					t.Errorf("the PDF's first page lacks %q:\n%s", s, first)
				}
			}
			for _, s := range tt.screenOnly {
				if !strings.Contains(page, s) {
					t.Errorf("the page shown lacks %q:\n%s", s, page)
				}
				if strings.Contains(all, s) {
					t.Errorf("the PDF holds %q", s)
				}
			}
			for _, s := range tt.printedNever {
				if strings.Contains(page, s) || strings.Contains(all, s) {
					t.Errorf("the page shown or the PDF holds %q", s)
				}
			}
			if len(tt.screenOnly) > 0 {
				var screen, printed string
				style := `getComputedStyle(document.querySelector("p.notice")).display`
				if err := chromedp.Run(ctx, chromedp.Evaluate(style, &screen), emulation.SetEmulatedMedia().WithMedia("print"),
					chromedp.Evaluate(style, &printed), emulation.SetEmulatedMedia().WithMedia("")); err != nil {
					t.Fatal(err)
				}
				if screen == "none" || printed != "none" {
					t.Errorf("the notice: display %q on screen and %q in print; want it shown, then hidden", screen, printed)
				}
			}
		})
	}
}
