package audittest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/testkit"
)

const (
	personA = "aaaaaaaa-0000-4000-8000-00000000000a"
	personB = "bbbbbbbb-0000-4000-8000-00000000000b"
)

// TestLedgerProblems: a real ledger holds the records of r1 and r2; the
// checks against answers find what is wrong, and nothing when nothing is.
func TestLedgerProblems(t *testing.T) {
	nc, js := testkit.ConnectNATS(t, testkit.RunNATS(t, nil).ClientURL())
	l, err := ledger.New(nc, ledger.Config{Replica: "r"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"r1", "r2"} {
		d := events.Disclosure{RequestID: id, Operation: "getAuthorizedSigners",
			Persons: []events.DisclosedPerson{{ID: personA, SSNMode: "FULL"}, {ID: personB, SSNMode: "FULL"}}}
		if err := l.Disclose(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	led, err := ReadLedger(t.Context(), js, ledger.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	if led.Records != 4 || !led.Report.OK() {
		t.Fatalf("ReadLedger = %d records, %q; want 4, no problem", led.Records, led.Report.Problems)
	}
	sent := func(ids ...string) []Answer {
		var as []Answer
		for _, id := range ids {
			as = append(as, Answer{ID: id, Status: http.StatusOK})
		}
		return as
	}
	twice := led
	twice.ByRequest = map[string][]ledger.Record{"r1": append(led.ByRequest["r1"], led.ByRequest["r1"][0])}
	tampered := led
	tampered.Report.Problems = []string{"stream sequence 1: deleted"}
	for _, tc := range []struct {
		name    string
		ledger  Ledger
		answers []Answer
		persons []string
		want    string // in the problems; "" = none
	}{
		{"every answer sent stored", led, sent("r1", "r2"), []string{personB, personA}, ""},
		{"answers not sent need nothing", led, []Answer{{ID: "r3", Status: http.StatusServiceUnavailable}, {ID: "r4"}}, []string{personA}, ""},
		{"an answer sent without its records", led, sent("r1", "r3"), []string{personA, personB}, "answer r3 sent"},
		{"an answer sent with a person's record missing", led, sent("r1"), []string{personA, personB, "c"}, "answer r1 sent"},
		{"a record stored twice", twice, nil, nil, "person " + personA + " is stored twice"},
		{"verify's problems", tampered, nil, nil, "audit verify: stream sequence 1: deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(tc.ledger.Problems(tc.answers, tc.persons), "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("problems:\n%s\nwant %q", got, tc.want)
			}
		})
	}
}

// TestReads: every request is sent under an id of its own and every
// answer kept, 200 or not.
func TestReads(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("Lookup-Purpose") != "P" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if strings.HasSuffix(r.Header.Get("X-Request-Id"), "0") {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	r := Start(Config{URL: srv.URL, Token: "tok", Workers: 4, Prefix: "x", Headers: map[string]string{"Lookup-Purpose": "P"}})
	testkit.WaitFor(t, 10*time.Second, func() error {
		if r.OK() < 50 || r.Failed() < 5 {
			return context.DeadlineExceeded
		}
		return nil
	})
	answers := r.Stop()
	ids := map[string]bool{}
	for _, a := range answers {
		if ids[a.ID] || !strings.HasPrefix(a.ID, "x-") {
			t.Errorf("request id %q twice or without the prefix", a.ID)
		}
		ids[a.ID] = true
		if want := strings.HasSuffix(a.ID, "0"); a.Released() == want || a.Sent.After(a.Done) {
			t.Errorf("answer %+v: released %v, want %v", a, a.Released(), !want)
		}
	}
	if got := int64(len(Released(answers))); got != r.OK() || int64(len(answers)) != r.OK()+r.Failed() {
		t.Errorf("%d answers, %d released; counters %d OK, %d failed", len(answers), got, r.OK(), r.Failed())
	}
}
