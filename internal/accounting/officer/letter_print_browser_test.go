package officer

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/browsertest"
)

// closing is the start of the letter's closing paragraph, which the
// signature follows.
const closing = "If you have a question about this accounting"

// TestLetterSignatureNeverAlone prints, on each paper, the letters of 1
// to maxEntries disclosures (the period shortened one day at a time, one
// disclosure a day) and checks that the last page of each holds the
// closing and the signature with at least one disclosure before them,
// never the closing block alone: the count of entries that pushes the
// signature past a page's foot is among them, as the page count grows.
func TestLetterSignatureNeverAlone(t *testing.T) {
	const maxEntries = 24
	ctx := browser(t)
	person, first := accountingtest.Persons[0], time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	ds := make([]accountingtest.Disclosure, maxEntries)
	for i := range ds {
		ds[i] = accountingtest.Disclosure{I: i, At: first.AddDate(0, 0, i), Person: person, Client: "onboarding", Purpose: "LEGAL", Op: "getPerson"}
	}
	f := newOfficerFixtureOf(t, 10, ds)
	srv := httptest.NewServer(f.h)
	defer srv.Close()

	for _, paper := range letterPapers {
		t.Run(paper, func(t *testing.T) {
			counts := map[int]bool{} // the page counts seen
			for n := 1; n <= maxEntries; n++ {
				from := ds[maxEntries-n].Time().Format(time.DateOnly)
				writeLetter(t, ctx, srv.URL, letterInput{person: person, requested: "2026-11-20", from: from, paper: paper})
				text, _ := browsertest.PrintPDF(t, ctx)
				pages := browsertest.Pages(text)
				counts[len(pages)] = true
				if got := len(letterRefs.FindAllString(browsertest.Words(text), -1)); got != n {
					t.Fatalf("%d disclosures: the letter lists %d", n, got)
				}
				last := browsertest.Words(pages[len(pages)-1])
				if !strings.Contains(last, closing) || !strings.HasSuffix(strings.TrimSpace(strings.Split(last, "Page ")[0]), "Privacy officer") {
					t.Errorf("%d disclosures: the last page (%d) lacks the closing or ends otherwise than with the signature:\n%s", n, len(pages), last)
				}
				if !letterRefs.MatchString(last) {
					t.Errorf("%d disclosures: the last page (%d) holds the closing and the signature alone, no disclosure before them:\n%s", n, len(pages), last)
				}
			}
			if len(counts) < 3 {
				t.Fatalf("the letters of 1 to %d disclosures have %d page counts, want 3 or more: the signature was not pushed to a new page twice", maxEntries, len(counts))
			}
		})
	}
}
