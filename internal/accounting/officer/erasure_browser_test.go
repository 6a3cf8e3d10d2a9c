package officer

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lookup/persons/internal/erasure"
	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/browsertest"
	"github.com/lookup/persons/internal/testing/erasuretest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// TestErasureSectionInABrowser: a consumer and its signer deleted and
// erased by the real eraser; the officer's person page, reading the
// erasure bucket's evidence alone as the accounting service does, shows
// for each id the section "Erasure": the deletion, the stream and the
// dead letters named and cleared at the time the evidence holds, the
// replica's files not yet cleared and so the erasure not complete; once
// the replica records a compaction, complete.
func TestErasureSectionInABrowser(t *testing.T) {
	ctx := browser(t)
	_, js := testkit.StartNATS(t)
	testkit.PersonsStream(t, js)
	consumer, signer := accountingtest.Persons[0], accountingtest.Persons[1]
	erased := erasuretest.DeleteConsumer(t, js, "", consumer, signer)
	status := func(ctx context.Context, id string) (erasure.Report, error) {
		return erasure.Status(ctx, erasure.StatusConfig{JS: js}, id)
	}
	f := newOfficerFixtureOf(t, 10, accountingtest.Disclosures(), func(c *Config) { c.Erasure = status })
	srv := httptest.NewServer(f.h)
	defer srv.Close()

	// section returns the section's words on id's page, and how many of
	// its table's rows are headed by a th scope="row".
	section := func(id string) (string, int) {
		t.Helper()
		var text string
		var rowHeads int
		if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/officer/person?id="+id),
			chromedp.WaitVisible(`section.erasure h2`, chromedp.ByQuery),
			chromedp.Text(`section.erasure`, &text, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll('section.erasure table.places tbody th[scope="row"]').length`, &rowHeads)); err != nil {
			t.Fatalf("the page of %s: %v", id, err)
		}
		return browsertest.Words(text), rowHeads
	}
	rep, err := status(t.Context(), consumer)
	if err != nil || len(rep.Entities) != 1 {
		t.Fatalf("status %+v, %v", rep, err)
	}
	clearedAt := rep.Entities[0].Places[0].At.UTC().Format("2006-01-02 15:04:05 UTC")
	deletedAt := erased.Deletion.Time.UTC().Format("2006-01-02 15:04:05 UTC")
	for _, tc := range []struct {
		id, what, with string
	}{{consumer, "Consumer " + consumer, ""}, {signer, "Authorized signer of consumer " + consumer + " " + signer, ", with consumer " + consumer}} {
		text, rows := section(tc.id)
		for _, w := range []string{"Erasure " + tc.what,
			"Deleted on " + deletedAt + " (stream sequence " + strconv.FormatUint(erased.Deletion.Seq, 10) + ")" + tc.with + ".",
			"Place Name What remains Cleared at",
			"Event stream PERSONS nothing " + clearedAt,
			"Dead letters PERSONS_DLQ nothing " + clearedAt,
			"Replica's files replica-a not yet cleared",
			"Erasure not complete."} {
			if !strings.Contains(text, w) {
				t.Errorf("%s's section lacks %q:\n%s", tc.id, w, text)
			}
		}
		if rows != 4 { // stream, dead letters, snapshots, the replica
			t.Errorf("%s's table has %d rows headed by th scope=row, want 4", tc.id, rows)
		}
	}

	compacted := erased.Deletion.Time.Add(90 * time.Minute).UTC().Truncate(time.Second)
	if err := erased.Eraser.RecordCompaction(t.Context(), erased.Deletion.Seq, compacted); err != nil {
		t.Fatal(err)
	}
	rep, err = status(t.Context(), signer)
	if err != nil || len(rep.Entities) != 1 || !rep.Entities[0].Complete {
		t.Fatalf("after the compaction, status %+v, %v", rep, err)
	}
	text, _ := section(signer)
	keepScreenshot(t, ctx, "section.erasure", "officer-erasure.png")
	for _, w := range []string{"Replica's files replica-a nothing " + compacted.Format("2006-01-02 15:04:05 UTC"),
		"Erasure complete on " + rep.Entities[0].CompletedAt.UTC().Format("2006-01-02 15:04:05 UTC") + "."} {
		if !strings.Contains(text, w) {
			t.Errorf("after the compaction, the section lacks %q:\n%s", w, text)
		}
	}
	// No deletion of the third person.
	if text, _ := section(accountingtest.Persons[2]); !strings.Contains(text, "No deletion of this person is recorded.") {
		t.Errorf("the section of a person never deleted: %s", text)
	}
}
