package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/accounting/fhir"
	"github.com/lookup/persons/internal/ledger"
)

// accountingQuery is the question of "lookupd audit": the disclosures of
// one person between two times (zero: unbounded), printed in Format
// ("jsonl" or "fhir").
type accountingQuery struct {
	Person       string
	Since, Until time.Time
	Format       string
}

// parseAccountingQuery validates the command line of "lookupd audit":
// person is a UUID (lower-cased), since and until an RFC 3339 time or a
// date (until a date takes the whole day), format jsonl or fhir. Its
// errors name the flags.
func parseAccountingQuery(person, since, until, format string) (accountingQuery, error) {
	q := accountingQuery{Format: format}
	if person == "" {
		return q, errors.New("--person is required")
	}
	var ok bool
	if q.Person, ok = events.NormalizeID(person); !ok {
		return q, fmt.Errorf("--person %q: want a UUID", person)
	}
	if format != "jsonl" && format != "fhir" {
		return q, fmt.Errorf("--format %q: want jsonl or fhir", format)
	}
	var err error
	if q.Since, err = parseQueryTime("--since", since); err != nil {
		return q, err
	}
	if q.Until, err = parseQueryTime("--until", until); err != nil {
		return q, err
	}
	return q, nil
}

// parseQueryTime parses an RFC 3339 time or a date ("" = zero).
func parseQueryTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		if flag == "--until" {
			return t.Add(24*time.Hour - time.Nanosecond), nil // the whole day
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s %q: want an RFC 3339 time or a date YYYY-MM-DD", flag, v)
}

// writeAccounting prints recs in format: one record per line (jsonl), or
// one FHIR Bundle made at now (fhir).
func writeAccounting(w io.Writer, recs []ledger.Record, format string, now time.Time) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if format == "fhir" {
		enc.SetIndent("", "  ")
		if err := enc.Encode(fhir.FHIRBundle(recs, now)); err != nil {
			return err
		}
		return bw.Flush()
	}
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writeVerify prints rep: one line for the total, one per chain, one per
// problem, then OK when there is none.
func writeVerify(w io.Writer, rep ledger.Report) {
	fmt.Fprintf(w, "%d records in %d messages in %d chains\n", rep.Records, rep.Messages, len(rep.Chains))
	for _, ch := range rep.Chains {
		fmt.Fprintf(w, "chain %s replica %s: messages %d-%d (%d held, %d records), %d problems\n",
			ch.ID, ch.Replica, ch.First, ch.Last, ch.Messages, ch.Records, ch.Problems)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "PROBLEM %s\n", p)
	}
	if rep.OK() {
		fmt.Fprintln(w, "OK")
	}
}
