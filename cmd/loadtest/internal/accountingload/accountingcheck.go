package accountingload

import (
	"context"
	"slices"
	"time"

	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/fixtures"
)

// sampleCheck is what reading sampled persons' whole histories through
// the API found, against a full scan of the stream.
type sampleCheck struct {
	Persons, Records int
	Diff             []string // nil: equal
}

// checkSample reads the whole history of n persons (half drawn as often
// as disclosed, half uniformly; each once) through the service's JSON
// lines, 500 a page (accountingtest.SearchClient, as lookupd audit --person reads
// it), and compares each with the stream's records of that person in scan. A
// record stored after the scan (a search's own, on the service's chain)
// is left out.
func (s *searcher) checkSample(ctx context.Context, n int, scan *accountingtest.Digest) (sampleCheck, error) {
	var c sampleCheck
	zipf, err := s.persons.Draw(fixtures.Zipf, n/2, s.seed^0xc0ffee)
	if err != nil {
		return c, err
	}
	uniform, err := s.persons.Draw(fixtures.Uniform, n-n/2, s.seed^0xbeef)
	if err != nil {
		return c, err
	}
	// Each person once: a person drawn twice (a small ledger's) would be
	// counted twice against the scan's once.
	persons := slices.Concat(zipf, uniform)
	slices.Sort(persons)
	persons = slices.Compact(persons)
	got := accountingtest.NewDigest()
	ac := accountingtest.SearchClient{BaseURL: s.svc.srv.API, Token: s.tokens[0], HTTP: s.client, PageSize: 500}
	for _, p := range persons {
		recs, err := ac.Fetch(ctx, p, time.Time{}, time.Time{})
		if err != nil {
			return c, err
		}
		for i := range recs {
			if recs[i].Seq > scan.ChainLast(recs[i].Chain) {
				continue // stored after the scan
			}
			if err := got.Add(p, &recs[i]); err != nil {
				return c, err
			}
		}
	}
	c.Persons, c.Records, c.Diff = len(persons), got.Records, got.DiffPersons(scan, persons)
	return c, nil
}

// fullCheck is the comparison of the whole index with a full scan of the
// stream.
type fullCheck struct {
	Records, Persons int
	Took             time.Duration
	Diff             []string
}

// checkIndex opens the index in dir (its service stopped) and compares
// every record it holds up to upTo with scan.
func checkIndex(dir string, upTo uint64, scan *accountingtest.Digest) (fullCheck, error) {
	start := time.Now()
	d, err := accountingtest.IndexDigest(dir, upTo)
	if err != nil {
		return fullCheck{}, err
	}
	return fullCheck{Records: d.Records, Persons: d.Persons(), Took: time.Since(start), Diff: d.Diff(scan)}, nil
}
