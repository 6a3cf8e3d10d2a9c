//go:build integration

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/accounting/fhir"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/audittest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// operationSearch is the operation of the record of a search of the
// accounting (OperationSearch of internal/accounting).
const operationSearch = "searchAuditEvent"

// startAccounting starts lookupd audit serve in a container of the image,
// as compose.yaml's lookupd-audit runs it, with its index on a volume;
// its listeners on 8080 and 9090, as lookupd's, so that the harness
// reaches them the same way.
func startAccounting(ctx context.Context, t *testing.T, nw string, is *issuer) *lookupd {
	t.Helper()
	return startLookupd(ctx, t, lookupdConfig{network: nw, natsURL: "nats://nats:4222", volume: "accounting-" + uuid.NewString(),
		jwks: is.jwks, args: []string{"audit", "serve"},
		env: map[string]string{"LOOKUP_AUDIT_STREAM": ledger.DefaultStream, "LOOKUP_ACCOUNTING_DIR": "/data", "LOOKUP_REPLICA_ID": "accounting",
			"LOOKUP_HTTP_ADDR": ":8080", "LOOKUP_ADMIN_ADDR": ":9090"}})
}

// TestAccountingService (issue 22): lookupd audit serve in its container
// beside lookupd and NATS. Its search (FHIR searchset and JSON lines)
// returns exactly the disclosures lookupd answered. Killed (SIGKILL) while
// lookupd's answers are recorded and auditors search, then started again
// on the same volume once more answers were recorded, it catches up:
// every answer sent (lookupd's and its own) has its records, once; verify
// passes; its index equals a full scan of the stream, without a duplicate.
func TestAccountingService(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := startAuditedStage(ctx, t, "replica-acct")
	nw, js, f, is, ld := st.nw, st.js, st.f, st.is, st.ld
	acct := startAccounting(ctx, t, nw, is)
	acct.waitReady(t)

	reader := is.tokenWith(t, "read:persons read:persons:ssn", time.Hour, map[string]any{"azp": "app-acct", "sub": "user-acct"})
	auditor := is.tokenWith(t, "read:audit", time.Hour, map[string]any{"azp": "app-auditor", "sub": "auditor"})
	persons := []string{f.signerBoth, f.signerSSN}
	readsOf := func(prefix string) *audittest.Reads {
		r := audittest.Start(audittest.Config{URL: ld.api + signersPath(f.consumer), Token: reader, Workers: 8, Prefix: prefix,
			Headers: map[string]string{"Lookup-Purpose": "TREATMENT"}})
		t.Cleanup(func() { r.Stop() })
		return r
	}
	r := readsOf("acct-first")
	waitAnswers(t, "answers of lookupd", r.OK, 150)
	answers := r.Stop()
	if r.Failed() > 0 {
		t.Fatalf("%d reads not answered 200", r.Failed())
	}
	s := &searcher{t: t, base: acct.api, token: auditor}

	t.Run("the search returns exactly the disclosures answered", func(t *testing.T) {
		checkSearchAnswered(t, s, persons, answers, "jsonl", "fhir")
	})

	// Killed while lookupd's answers are recorded (the index applying
	// them) and an auditor searches (its own ledger's messages in flight);
	// lookupd answers more while it is down.
	r = readsOf("acct-kill")
	searches := audittest.Start(audittest.Config{URL: acct.api + "/fhir/AuditEvent?_format=jsonl&_count=5&entity=" + f.signerSSN,
		Token: auditor, Workers: 4, Prefix: "search", Headers: map[string]string{"Lookup-Purpose": "AUDIT"}})
	t.Cleanup(func() { searches.Stop() })
	waitAnswers(t, "searches before the kill", searches.OK, 50)
	killContainer(ctx, t, acct.ctr)
	searched := searches.Stop()
	okAt := r.OK()
	waitAnswers(t, "answers of lookupd while the accounting service is down", r.OK, okAt+150)
	answers = append(answers, r.Stop()...)
	if r.Failed() > 0 {
		t.Fatalf("%d reads not answered 200", r.Failed())
	}
	acct.run(ctx, t) // a new container on the same volume
	acct.waitReady(t)
	s.base = acct.api

	t.Run("every answer sent has its records, once; verify passes", func(t *testing.T) {
		led, err := audittest.ReadLedger(ctx, js, ledger.DefaultStream)
		if err != nil {
			t.Fatal(err)
		}
		led.Check(t, answers, persons)
		n := led.Check(t, searched, []string{f.signerSSN})
		t.Logf("%d searches answered before the kill, %d not; stream: %d records in %d messages, %d chains",
			n, len(searched)-n, led.Records, led.Report.Messages, len(led.Report.Chains))
	})

	t.Run("the index resumed: it equals a full scan of the stream", func(t *testing.T) {
		for _, p := range persons {
			checkIndexEqualsScan(ctx, t, s, js, p)
		}
	})

	t.Run("the search returns exactly the disclosures answered, those made while it was down too", func(t *testing.T) {
		checkSearchAnswered(t, s, persons, answers, "jsonl")
	})
}

// checkSearchAnswered polls until the search of each person, in each
// format, returns exactly the disclosures of the answers sent.
func checkSearchAnswered(t *testing.T, s *searcher, persons []string, answers []audittest.Answer, formats ...string) {
	t.Helper()
	want := slices.Sorted(slices.Values(audittest.Released(answers)))
	for _, p := range persons {
		for _, format := range formats {
			eventually(t, 30*time.Second, format+" search of "+p, func() error {
				if got := requestIDs(s.search(p, format)); !slices.Equal(got, want) {
					return fmt.Errorf("%d disclosures, want the %d answered", len(got), len(want))
				}
				return nil
			})
		}
	}
}

// checkIndexEqualsScan polls until the search of person returns what a
// full scan of the stream holds of person (as many times each), leaving
// out the records of the check's own searches.
func checkIndexEqualsScan(ctx context.Context, t *testing.T, s *searcher, js jetstream.JetStream, person string) {
	t.Helper()
	own := map[string]bool{}
	eventually(t, 30*time.Second, "the index of "+person+" equal to a scan", func() error {
		got := recordCounts(s.search(person, "jsonl"), own)
		for _, id := range s.ids {
			own[id] = true
		}
		recs, err := ledger.ScanPerson(ctx, js, ledger.DefaultStream, person, time.Time{}, time.Time{})
		if err != nil {
			return err
		}
		var scan []auditRecord
		for _, r := range recs {
			b, _ := json.Marshal(r)
			var ar auditRecord
			_ = json.Unmarshal(b, &ar)
			scan = append(scan, ar)
		}
		want := recordCounts(scan, own)
		if !maps.Equal(got, want) {
			return fmt.Errorf("the index holds %d records (%d distinct), the stream %d (%d distinct)", total(got), len(got), total(want), len(want))
		}
		for k, n := range got {
			if n > 1 {
				t.Errorf("the index holds %s %d times", k, n)
			}
		}
		return nil
	})
}

// recordCounts counts recs by request id, person, replica and time,
// leaving out those of the request ids of skip.
func recordCounts(recs []auditRecord, skip map[string]bool) map[string]int {
	m := map[string]int{}
	for _, r := range recs {
		if !skip[r.RequestID] {
			m[fmt.Sprint(r.RequestID, " ", r.PersonID, " ", r.Replica, " ", r.Time.UnixNano())]++
		}
	}
	return m
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// requestIDs returns the sorted request ids of the disclosures of recs
// (the records of searches left out).
func requestIDs(recs []auditRecord) []string {
	var ids []string
	for _, r := range recs {
		if r.Operation != operationSearch {
			ids = append(ids, r.RequestID)
		}
	}
	slices.Sort(ids)
	return ids
}

// searcher searches the accounting service as an auditor, and keeps the
// request ids of its searches (each is recorded in the ledger).
type searcher struct {
	t     *testing.T
	base  string
	token string
	ids   []string
}

// search returns every record of person, following the next links, read
// from the FHIR Bundles (format "fhir") or the JSON lines ("jsonl").
func (s *searcher) search(person, format string) []auditRecord {
	s.t.Helper()
	// The Bundles on one page (their total checked), the JSON lines on
	// several (the next links followed).
	target := "/fhir/AuditEvent?_count=500&entity=" + person
	if format == "jsonl" {
		target = "/fhir/AuditEvent?_count=100&_format=jsonl&entity=" + person
	}
	var out []auditRecord
	for pages := 0; target != ""; pages++ {
		if pages > 100 {
			s.t.Fatal("no last page after 100")
		}
		r, err := testkit.HTTPGet(nil, s.base+target, s.token, map[string]string{"Lookup-Purpose": "AUDIT"})
		if err != nil || r.Status != http.StatusOK {
			s.t.Fatalf("GET %s: %d %s %v", target, r.Status, r.Body, err)
		}
		s.ids = append(s.ids, r.Header.Get("X-Request-Id"))
		var page []auditRecord
		if format == "jsonl" {
			page, target = jsonlPage(s.t, r)
		} else {
			page, target = fhirPage(s.t, r.Body, person)
		}
		out = append(out, page...)
	}
	return out
}

// jsonlPage returns the records of a page of JSON lines and the next
// page's target ("" for the last).
func jsonlPage(t *testing.T, r testkit.HTTPResponse) ([]auditRecord, string) {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/jsonl" {
		t.Fatalf("Content-Type %q, want application/jsonl", ct)
	}
	var recs []auditRecord
	sc := bufio.NewScanner(strings.NewReader(string(r.Body)))
	for sc.Scan() {
		var rec auditRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		recs = append(recs, rec)
	}
	next := ""
	if l := r.Header.Get("Link"); l != "" {
		next = strings.TrimPrefix(strings.SplitN(l, ">", 2)[0], "<")
	}
	return recs, next
}

// fhirPage returns the records of a page of a FHIR searchset Bundle (as
// checkFHIRBundle checks it) and the next link ("" for the last).
func fhirPage(t *testing.T, body []byte, person string) ([]auditRecord, string) {
	t.Helper()
	var b fhir.Bundle
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("bundle: %v", err)
	}
	if b.Total != nil { // the whole search on one page
		checkFHIRBundle(t, string(body), person, len(b.Entry))
	}
	var recs []auditRecord
	for _, e := range b.Entry {
		ev := e.Resource
		rec := auditRecord{PersonID: strings.TrimPrefix(ev.Entity[0].What.Reference, "Patient/"), Replica: ev.Source.Site,
			RequestID: ev.Entity[1].What.Identifier.Value, Operation: ev.Entity[0].Detail[len(ev.Entity[0].Detail)-1].ValueString}
		rec.Time, _ = time.Parse(time.RFC3339Nano, ev.Recorded)
		recs = append(recs, rec)
	}
	next := ""
	for _, l := range b.Link {
		if l.Relation == "next" {
			next = l.URL
		}
	}
	return recs, next
}
