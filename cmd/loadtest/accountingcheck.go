package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/fixtures"
)

// sampleCheck is what reading sampled persons' whole histories through
// the API found, against a full scan of the stream.
type sampleCheck struct {
	Persons, Records int
	Diff             []string // nil: equal
}

// checkSample reads the whole history of n persons (half drawn as often
// as disclosed, half uniformly; each once) through the service's JSON lines, and
// compares each with the stream's records of that person in scan. A
// record stored after the scan (a search's own, on the service's chain)
// is left out.
func (s *searcher) checkSample(ctx context.Context, n int, scan *accounting.Digest) (sampleCheck, error) {
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
	got := accounting.NewDigest()
	for _, p := range persons {
		if ctx.Err() != nil {
			return c, ctx.Err()
		}
		for uri := (loadtest.AccountingQuery{Person: p, Count: 500, JSONL: true}).URI(); uri != ""; {
			page, err := loadtest.GetAccountingPage(s.client, s.svc.srv.API, uri, s.tokens[0])
			if err != nil {
				return c, err
			}
			for _, raw := range page.Records {
				var r ledger.Record
				if err := json.Unmarshal(raw, &r); err != nil {
					return c, fmt.Errorf("a record of %s: %w", p, err)
				}
				if r.Seq > scan.ChainLast(r.Chain) {
					continue // stored after the scan
				}
				if err := got.Add(p, &r); err != nil {
					return c, err
				}
			}
			uri = page.Next
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
func checkIndex(dir string, upTo uint64, scan *accounting.Digest) (fullCheck, error) {
	start := time.Now()
	x, err := accounting.Open(dir, accounting.Options{})
	if err != nil {
		return fullCheck{}, err
	}
	defer x.Close()
	d, err := x.Digest(upTo)
	if err != nil {
		return fullCheck{}, err
	}
	return fullCheck{Records: d.Records, Persons: d.Persons(), Took: time.Since(start), Diff: d.Diff(scan)}, nil
}
