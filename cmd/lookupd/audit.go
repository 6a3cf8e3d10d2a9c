package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/internal/accounting/fhir"
	"github.com/lookup/persons/internal/admin"
	"github.com/lookup/persons/internal/apiserver"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/lifecycle"
	"github.com/lookup/persons/internal/natsconn"
	"github.com/lookup/persons/internal/redact"
	"github.com/lookup/persons/internal/settings"
)

// newLedger returns the audit ledger of serve, publishing through nc, with
// the projector's position as the read model position.
func newLedger(cfg settings.Config, nc *nats.Conn, proj admin.ProgressSource, reg prometheus.Registerer, logger *slog.Logger) (*ledger.Ledger, error) {
	replica := cfg.ReplicaName("")
	mode := ledger.Mode(cfg.Audit) // the settings table's default: required
	l, err := apiserver.NewLedger(nc, apiserver.LedgerConfig{Mode: mode, Stream: cfg.AuditStream, Replica: replica,
		Position: func() uint64 { return proj.Progress().AppliedSeq }, Registerer: reg, Logger: logger})
	if err != nil {
		return nil, err
	}
	logger.Info("audit ledger", "mode", string(mode), "audit_stream", cfg.AuditStream, "replica", replica,
		"require_purpose", cfg.RequirePurpose)
	return l, nil
}

// ledgerCloser is the step of a shutdown that waits a little for the
// records still in flight.
func ledgerCloser(l *ledger.Ledger) lifecycle.Closer {
	return lifecycle.Closer{Name: "audit ledger", Close: l.Close, Limit: settings.LedgerFlushLimit}
}

// natsCloser is the step of a shutdown that closes nc.
func natsCloser(nc *nats.Conn) lifecycle.Closer {
	return lifecycle.Closer{Name: "nats", Close: func(context.Context) error { nc.Close(); return nil }}
}

// closeLedger waits a little for the records still in flight (a command
// that returns before its shutdown).
func closeLedger(l *ledger.Ledger, logger *slog.Logger) {
	c := ledgerCloser(l)
	lifecycle.Flush(c.Close, c.Limit, c.Name, logger)
}

func cmdAudit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "verify" {
		return cmdAuditVerify(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "serve" {
		return cmdAuditServe(ctx, args[1:], getenv, stdout, stderr)
	}
	c, err := settings.NewCommand(settings.Audit, "audit", `
Prints the accounting of disclosures of one person: every answer of the API
that disclosed the person's SSN (whole or in part) or date of birth, newest
first, with when, to whom (token sub and client), why (Lookup-Purpose), and
which fields. --format jsonl prints one audit record per line; fhir prints a
FHIR R4 Bundle of AuditEvent resources (IHE BALP patient-read pattern).
--since and --until take an RFC 3339 time or a date (YYYY-MM-DD, UTC).
With --accounting-url it asks the accounting service (lookupd audit serve)
with the token in --accounting-token-file (scope read:audit); without, it
reads the whole audit stream (records are in each replica's chain, not on
a subject per person). It says "0 disclosures" on stderr when it finds
none.

"lookupd audit verify" checks every replica's chain of records instead and
reports gaps and altered records (exit status 1 when it finds any).
"lookupd audit serve" runs the accounting service.`, getenv)
	if err != nil {
		return err
	}
	person := c.Flags.StringLong("person", "", "id of the person (or signer) whose disclosures are listed (required)")
	since := c.Flags.StringLong("since", "", "list disclosures at or after this time")
	until := c.Flags.StringLong("until", "", "list disclosures at or before this time")
	format := c.Flags.StringLong("format", "jsonl", "output: jsonl or fhir")
	if err := c.Parse(args, stdout, stderr); err != nil {
		return err
	}
	q, err := parseAccountingQuery(*person, *since, *until, *format)
	if err != nil {
		return c.Refuse(stderr, err)
	}
	recs, source, err := accountingOf(ctx, c.Config, q)
	if err != nil {
		return err
	}
	if err := writeAccounting(stdout, recs, q.Format, time.Now()); err != nil {
		return err
	}
	if len(recs) == 0 {
		// On stderr, so that stdout stays JSON lines (or one Bundle): a
		// person with no record does not get silence.
		fmt.Fprintf(stderr, "0 disclosures of %s in %s\n", q.Person, source)
	}
	return nil
}

// accountingOf returns the records of q, from the accounting service when
// cfg names one, else by scanning the audit stream, and what it read them
// from (for "0 disclosures of ... in <source>").
func accountingOf(ctx context.Context, cfg settings.Config, q accountingQuery) ([]ledger.Record, string, error) {
	if cfg.AccountingURL != "" {
		if err := cfg.CheckAccountingURL(); err != nil {
			return nil, "", err
		}
		tok, err := fhir.ReadTokenFile("LOOKUP_ACCOUNTING_TOKEN_FILE", cfg.AccountingTokenFile)
		if err != nil {
			return nil, "", err
		}
		cl := fhir.Client{BaseURL: cfg.AccountingURL, Token: tok}
		recs, err := cl.Fetch(ctx, q.Person, q.Since, q.Until)
		return recs, redact.URL(cfg.AccountingURL), err
	}
	js, closeNC, err := auditJetStream(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	defer closeNC()
	recs, err := ledger.ScanPerson(ctx, js, cfg.AuditStream, q.Person, q.Since, q.Until)
	return recs, cfg.AuditStream, err
}

func cmdAuditVerify(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := settings.NewCommand(settings.Audit, "audit verify", `
Reads every message of the audit stream and checks each replica's chain: it
must run from message 1 without a gap, in stream order, each message must
hold the hash of its predecessor, and no message may be missing between the
stream's first and last sequence (the last one too). Prints one line per
chain and one per problem found; exits with status 1 when it finds any.`, getenv)
	if err != nil {
		return err
	}
	if err := c.Parse(args, stdout, stderr); err != nil {
		return err
	}
	js, closeNC, err := auditJetStream(ctx, c.Config)
	if err != nil {
		return err
	}
	defer closeNC()
	rep, err := ledger.Verify(ctx, js, c.Config.AuditStream)
	if err != nil {
		return err
	}
	writeVerify(stdout, rep)
	if !rep.OK() {
		return fmt.Errorf("audit verify: %d problems", len(rep.Problems))
	}
	return nil
}

// auditJetStream connects to cfg's NATS for a one-off command: it fails
// when NATS is not reachable within 10 s.
func auditJetStream(ctx context.Context, cfg settings.Config) (jetstream.JetStream, func(), error) {
	nc, js, err := natsconn.WithJetStream(connectNATSWithin(ctx, cfg, "lookupd audit", slog.New(slog.DiscardHandler), 10*time.Second))
	if err != nil {
		return nil, nil, err
	}
	return js, nc.Close, nil
}
