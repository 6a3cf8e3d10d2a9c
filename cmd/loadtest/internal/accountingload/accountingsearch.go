package accountingload

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/lookup/persons/internal/testing/fixtures"
)

// noRecords draws persons the ledger never disclosed: the baseline, a
// search that finds nothing (its token checked, its record stored, an
// empty range read).
const noRecords = "none"

// searchKind is one kind of search measured.
type searchKind struct {
	name    string
	persons string // fixtures.Zipf (as often as disclosed), fixtures.Uniform or noRecords
	count   int    // _count
	jsonl   bool
	quarter bool // within 90 days of the ledger's span (date=ge&date=le)
	whole   bool // every page of the history, following next
	// recipient, when set, makes it the officer's search by recipient
	// over a month (the service's page size; count unused): of a client
	// (byClient), one of its subjects (bySubject) or both (byBoth), the
	// client drawn uniformly of the ledger's, busy or quiet.
	recipient string
	// officer, when set, makes it the officer's page of a person
	// (OfficerPerson) or the letter for them (OfficerLetter,
	// their request on the ledger's last day: its six years), of persons
	// of about `about` records.
	officer string
	about   int
	// target is the p99 a request must keep to (0: searchTarget).
	target time.Duration
}

// Issue 37's targets for the officer's pages, at ten million records.
const (
	officerPageTarget      = 200 * time.Millisecond // a person of 1,000 disclosures
	officerRecipientTarget = 500 * time.Millisecond // a recipient's month
	officerLetterTarget    = 500 * time.Millisecond // the letter for a person of 1,000 disclosures
)

// p99Target returns the target of k's p99.
func (k searchKind) p99Target() time.Duration {
	if k.target == 0 {
		return searchTarget
	}
	return k.target
}

// The recipients of a search by recipient.
const (
	byClient  = "client"
	bySubject = "subject"
	byBoth    = "client and subject"
)

// searchKinds are the searches measured, the baseline first.
var searchKinds = []searchKind{
	{name: "no records (baseline)", persons: noRecords, count: 100},
	{name: "first page, FHIR", persons: fixtures.Zipf, count: 100},
	{name: "first page, JSON lines", persons: fixtures.Zipf, count: 100, jsonl: true},
	{name: "first page, FHIR, any person", persons: fixtures.Uniform, count: 100},
	{name: "a quarter, FHIR", persons: fixtures.Zipf, count: 100, quarter: true},
	{name: "whole history, FHIR, 100 a page", persons: fixtures.Zipf, count: 100, whole: true},
	{name: "whole history, JSON lines, 500 a page", persons: fixtures.Zipf, count: 500, jsonl: true, whole: true},
	{name: "a client's month, officer's page", recipient: byClient, target: officerRecipientTarget},
	{name: "a client's subject's month, officer's page", recipient: byBoth, target: officerRecipientTarget},
	{name: "a subject's month, officer's page", recipient: bySubject, target: officerRecipientTarget},
	{name: "a person of about 1,000 records, officer's page", officer: OfficerPerson, about: 1000, target: officerPageTarget},
	{name: "the letter for a person of about 1,000 records", officer: OfficerLetter, about: 1000, target: officerLetterTarget},
}

// searchRun is what one kind of search measured.
type searchRun struct {
	Kind      searchKind
	Requests  []time.Duration // each request (page)
	Histories []time.Duration // each search (its pages), for whole
	Records   []int           // records of each search (all its pages)
	Took      time.Duration
	CPU       time.Duration // of audit serve
	GCs       int           // of audit serve
	Errors    int
	FirstErr  error
}

// searcher runs searches against the service with tokens, one per
// connection.
type searcher struct {
	svc     *auditService
	client  *http.Client
	tokens  []string
	persons *fixtures.LedgerPersons
	spec    fixtures.LedgerSpec
	seed    uint64
	only    *regexp.Regexp // the kinds measured, but the baseline (nil: all)
}

// newSearcher returns a searcher of conns connections.
func newSearcher(svc *auditService, tokens []string, spec fixtures.LedgerSpec, seed uint64, only *regexp.Regexp) *searcher {
	tr := &http.Transport{MaxIdleConnsPerHost: len(tokens), MaxConnsPerHost: len(tokens)}
	return &searcher{svc: svc, client: &http.Client{Timeout: 30 * time.Second, Transport: tr}, tokens: tokens,
		persons: fixtures.NewLedgerPersons(spec), spec: spec, seed: seed, only: only}
}

// measure runs each kind of search for d from every connection, one kind
// after another.
func (s *searcher) measure(ctx context.Context, d time.Duration, progress io.Writer) ([]searchRun, error) {
	// A warm-up, not measured: connections opened, tokens verified.
	if _, err := s.run(ctx, searchKinds[0], min(d/4, 3*time.Second), s.seed^0x3a3a); err != nil {
		return nil, err
	}
	var runs []searchRun
	for i, k := range searchKinds {
		if i > 0 && s.only != nil && !s.only.MatchString(k.name) {
			continue
		}
		fmt.Fprintf(progress, "searching: %s, %v from %d connections ...\n", k.name, d, len(s.tokens))
		s.svc.profile(ctx, fmt.Sprintf("search-%d-cpu.pprof", i), min(d-time.Second, 25*time.Second))
		r, err := s.run(ctx, k, d, s.seed+uint64(i)) //nolint:gosec // G115: i is small
		if err != nil {
			return nil, err
		}
		if r.FirstErr != nil {
			return nil, fmt.Errorf("%s: %d errors, the first: %w", k.name, r.Errors, r.FirstErr)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// run runs searches of kind k for d from every connection.
func (s *searcher) run(ctx context.Context, k searchKind, d time.Duration, seed uint64) (searchRun, error) {
	r := searchRun{Kind: k}
	queries, err := s.queries(k, 200000, seed)
	if err != nil {
		return r, err
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start, cpu0, gc0 := time.Now(), s.svc.cpu(), s.svc.gcs()
	deadline := start.Add(d)
	for c, tok := range s.tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine searchRun
			for i := c * len(queries) / len(s.tokens); time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				s.search(tok, queries[i%len(queries)], k.whole, &mine)
			}
			mu.Lock()
			defer mu.Unlock()
			r.Requests, r.Histories = append(r.Requests, mine.Requests...), append(r.Histories, mine.Histories...)
			r.Records, r.Errors = append(r.Records, mine.Records...), r.Errors+mine.Errors
			if r.FirstErr == nil {
				r.FirstErr = mine.FirstErr
			}
		}()
	}
	wg.Wait()
	r.Took, r.CPU, r.GCs = time.Since(start), s.svc.cpu()-cpu0, s.svc.gcs()-gc0
	return r, ctx.Err()
}

// search runs one search of q (every page when whole) into r.
func (s *searcher) search(token string, q AccountingQuery, whole bool, r *searchRun) {
	start, records := time.Now(), 0
	for uri, form := q.URI(), q.Form(); uri != ""; form = nil {
		t := time.Now()
		p, err := FetchAccountingPage(s.client, s.svc.srv.API, uri, form, token)
		r.Requests = append(r.Requests, time.Since(t))
		if err != nil {
			if r.Errors++; r.FirstErr == nil {
				r.FirstErr = err
			}
			return
		}
		records += len(p.Records) + p.Rows
		if uri = p.Next; !whole {
			break
		}
	}
	r.Records = append(r.Records, records)
	if whole {
		r.Histories = append(r.Histories, time.Since(start))
	}
}

// queries returns n queries of kind k drawn from seed.
func (s *searcher) queries(k searchKind, n int, seed uint64) ([]AccountingQuery, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x94d049bb133111eb)) //nolint:gosec // G404: which searches to run, not secrets
	if k.recipient != "" {
		return s.recipientQueries(k, n, rng), nil
	}
	if k.officer != "" {
		return s.officerQueries(k, n, rng), nil
	}
	var ids []string
	if k.persons == noRecords {
		ids = make([]string, n)
		for i := range ids {
			ids[i] = uuid.Must(uuid.NewRandomFromReader(rngReader{rng})).String()
		}
	} else {
		var err error
		if ids, err = s.persons.Draw(k.persons, n, seed); err != nil {
			return nil, err
		}
	}
	from, to := s.spec.Span()
	out := make([]AccountingQuery, n)
	for i, id := range ids {
		q := AccountingQuery{Person: id, Count: k.count, JSONL: k.jsonl}
		if k.quarter {
			q.Since = from.Add(time.Duration(rng.Int64N(int64(to.Sub(from) - 90*24*time.Hour))))
			q.Until = q.Since.Add(90 * 24 * time.Hour)
		}
		out[i] = q
	}
	return out, nil
}

// recipientQueries returns n searches by recipient of kind k, each over
// a month (30 days) of the ledger's span drawn from rng.
func (s *searcher) recipientQueries(k searchKind, n int, rng *rand.Rand) []AccountingQuery {
	from, to := s.spec.Span()
	const month = 29 * 24 * time.Hour // to the 30th day, inclusive
	out := make([]AccountingQuery, n)
	for i := range out {
		c, j := rng.IntN(fixtures.LedgerClients), rng.IntN(fixtures.LedgerSubjects)
		q := AccountingQuery{Since: from.Add(time.Duration(rng.Int64N(int64(to.Sub(from) - month))))}
		q.Until = q.Since.Add(month)
		if k.recipient != bySubject {
			q.Client = fixtures.LedgerClient(c)
		}
		if k.recipient != byClient {
			q.Subject = fixtures.LedgerSubject(c, j)
		}
		out[i] = q
	}
	return out
}

// officerQueries returns n of the officer's pages of kind k, each of one
// of the 20 persons of about k.about records, drawn from rng.
func (s *searcher) officerQueries(k searchKind, n int, rng *rand.Rand) []AccountingQuery {
	persons := s.persons.About(s.spec.Records, k.about, 20)
	_, end := s.spec.Span()
	out := make([]AccountingQuery, n)
	for i := range out {
		out[i] = AccountingQuery{Person: persons[rng.IntN(len(persons))], Officer: k.officer, Requested: end}
	}
	return out
}

// rngReader reads random bytes from a math/rand generator.
type rngReader struct{ rng *rand.Rand }

func (r rngReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r.rng.Uint32()) //nolint:gosec // G115: its low byte, on purpose
	}
	return len(p), nil
}

// percentile returns the p-th percentile (0 < p <= 100) of ds, 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}
