package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/audit"
	"github.com/lookup/persons/internal/projectormetrics"
)

// newLedger returns the audit ledger of serve, publishing through nc, with
// the projector's position as the read model position.
func newLedger(cfg config, nc *nats.Conn, proj projectormetrics.Source, reg prometheus.Registerer, logger *slog.Logger) (*audit.Ledger, error) {
	replica := replicaName(cfg)
	mode := audit.Mode(cfg.Audit)
	if mode == "" {
		mode = audit.Required
	}
	l, err := audit.New(nc, audit.Config{
		Mode:       mode,
		Stream:     cfg.AuditStream,
		Replica:    replica,
		Position:   func() uint64 { return proj.Progress().AppliedSeq },
		Logger:     logger.With("component", "audit"),
		Registerer: reg,
	})
	if err != nil {
		return nil, fmt.Errorf("audit ledger: %w", err)
	}
	logger.Info("audit ledger", "mode", string(mode), "audit_stream", cfg.AuditStream, "replica", replica,
		"require_purpose", cfg.RequirePurpose)
	return l, nil
}

// closeLedger waits a little for the records still in flight.
func closeLedger(l *audit.Ledger, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.Close(ctx); err != nil {
		logger.Error("audit ledger", "err", err)
	}
}

func cmdAudit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "verify" {
		return cmdAuditVerify(ctx, args[1:], getenv, stdout, stderr)
	}
	c, err := newCommand(inAudit, "audit", `
Prints the accounting of disclosures of one person: every answer of the API
that disclosed the person's SSN (whole or in part) or date of birth, newest
first, with when, to whom (token sub and client), why (Lookup-Purpose), and
which fields. --format jsonl prints one audit record per line; fhir prints a
FHIR R4 Bundle of AuditEvent resources (IHE BALP patient-read pattern).
--since and --until take an RFC 3339 time or a date (YYYY-MM-DD, UTC).
It reads the whole audit stream (records are in each replica's chain, not
on a subject per person) and says "0 disclosures" on stderr when it finds
none.

"lookupd audit verify" checks every replica's chain of records instead and
reports gaps and altered records (exit status 1 when it finds any).`, getenv)
	if err != nil {
		return err
	}
	person := c.fs.StringLong("person", "", "id of the person (or signer) whose disclosures are listed (required)")
	since := c.fs.StringLong("since", "", "list disclosures at or after this time")
	until := c.fs.StringLong("until", "", "list disclosures at or before this time")
	format := c.fs.StringLong("format", "jsonl", "output: jsonl or fhir")
	if err := c.parse(args, stdout, stderr); err != nil {
		return err
	}
	q, err := parseAccountingQuery(*person, *since, *until, *format)
	if err != nil {
		c.usage(stderr)
		return &usageError{err}
	}
	js, closeNC, err := auditJetStream(ctx, c.cfg)
	if err != nil {
		return err
	}
	defer closeNC()
	recs, err := audit.Accounting(ctx, js, c.cfg.AuditStream, q.person, q.since, q.until)
	if err != nil {
		return err
	}
	if err := writeAccounting(stdout, recs, q.format); err != nil {
		return err
	}
	if len(recs) == 0 {
		// On stderr, so that stdout stays JSON lines (or one Bundle): a
		// person with no record does not get silence.
		fmt.Fprintf(stderr, "0 disclosures of %s in %s\n", q.person, c.cfg.AuditStream)
	}
	return nil
}

// accountingQuery is the validated command line of "lookupd audit".
type accountingQuery struct {
	person       string
	since, until time.Time
	format       string
}

func parseAccountingQuery(person, since, until, format string) (accountingQuery, error) {
	q := accountingQuery{format: format}
	if person == "" {
		return q, errors.New("--person is required")
	}
	var ok bool
	if q.person, ok = events.NormalizeID(person); !ok {
		return q, fmt.Errorf("--person %q: want a UUID", person)
	}
	if format != "jsonl" && format != "fhir" {
		return q, fmt.Errorf("--format %q: want jsonl or fhir", format)
	}
	var err error
	if q.since, err = parseAuditTime("--since", since); err != nil {
		return q, err
	}
	if q.until, err = parseAuditTime("--until", until); err != nil {
		return q, err
	}
	return q, nil
}

// parseAuditTime parses an RFC 3339 time or a date ("" = zero).
func parseAuditTime(flag, v string) (time.Time, error) {
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

// writeAccounting prints recs in format.
func writeAccounting(w io.Writer, recs []audit.Record, format string) error {
	bw := bufio.NewWriter(w)
	if format == "fhir" {
		enc := json.NewEncoder(bw)
		enc.SetIndent("", "  ")
		if err := enc.Encode(audit.FHIRBundle(recs, time.Now())); err != nil {
			return err
		}
		return bw.Flush()
	}
	enc := json.NewEncoder(bw)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func cmdAuditVerify(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := newCommand(inAudit, "audit verify", `
Reads every message of the audit stream and checks each replica's chain: it
must run from message 1 without a gap, in stream order, each message must
hold the hash of its predecessor, and no message may be missing between the
stream's first and last sequence (the last one too). Prints one line per
chain and one per problem found; exits with status 1 when it finds any.`, getenv)
	if err != nil {
		return err
	}
	if err := c.parse(args, stdout, stderr); err != nil {
		return err
	}
	js, closeNC, err := auditJetStream(ctx, c.cfg)
	if err != nil {
		return err
	}
	defer closeNC()
	rep, err := audit.Verify(ctx, js, c.cfg.AuditStream)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d records in %d messages in %d chains\n", rep.Records, rep.Messages, len(rep.Chains))
	for _, ch := range rep.Chains {
		fmt.Fprintf(stdout, "chain %s replica %s: messages %d-%d (%d held, %d records), %d problems\n",
			ch.ID, ch.Replica, ch.First, ch.Last, ch.Messages, ch.Records, ch.Problems)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(stdout, "PROBLEM %s\n", p)
	}
	if !rep.OK() {
		return fmt.Errorf("audit verify: %d problems", len(rep.Problems))
	}
	fmt.Fprintln(stdout, "OK")
	return nil
}

// auditJetStream connects to cfg's NATS for a one-off command: it fails
// when NATS is not reachable within 10 s.
func auditJetStream(ctx context.Context, cfg config) (jetstream.JetStream, func(), error) {
	nc, js, err := withJetStream(connectNATSWithin(ctx, cfg, "lookupd audit", slog.New(slog.DiscardHandler), 10*time.Second))
	if err != nil {
		return nil, nil, err
	}
	return js, nc.Close, nil
}
