package pgyardstick

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// rowsPrint identifies a set of rows: how many, their bodies' bytes and a
// SHA-256 of every id and body in order.
type rowsPrint struct {
	Rows, Bytes int64
	Sum         string
}

// fingerprint reads rows once and returns their rowsPrint.
func fingerprint(rows iter.Seq2[string, []byte]) rowsPrint {
	h := sha256.New()
	var p rowsPrint
	var n [8]byte
	for id, body := range rows {
		binary.BigEndian.PutUint64(n[:], uint64(len(id)))
		h.Write(n[:])
		h.Write([]byte(id))
		binary.BigEndian.PutUint64(n[:], uint64(len(body)))
		h.Write(n[:])
		h.Write(body)
		p.Rows++
		p.Bytes += int64(len(body))
	}
	p.Sum = hex.EncodeToString(h.Sum(nil))
	return p
}

// loadedPrint returns the rowsPrint of the rows the database holds, the
// zero rowsPrint when it holds none.
func loadedPrint(ctx context.Context, c *pgx.Conn) (rowsPrint, error) {
	var p rowsPrint
	var exists bool
	if err := c.QueryRow(ctx, "SELECT to_regclass('loadtest_rows') IS NOT NULL").Scan(&exists); err != nil || !exists {
		return p, err
	}
	err := c.QueryRow(ctx, "SELECT rows, bytes, sum FROM loadtest_rows").Scan(&p.Rows, &p.Bytes, &p.Sum)
	if errors.Is(err, pgx.ErrNoRows) {
		err = nil
	}
	return p, err
}

// loadRows replaces the table persons (id uuid primary key, body bytea)
// with rows, copied in with COPY, and records want as the rows loaded,
// all in one transaction: a load cut short leaves nothing that looks
// loaded. The table is created in that transaction, so with wal_level
// minimal the COPY writes no WAL; the key is built after the copy, and
// VACUUM FREEZE ANALYZE then sets the hint bits and statistics so that the
// first reads write nothing.
func loadRows(ctx context.Context, c *pgx.Conn, rows iter.Seq2[string, []byte], want rowsPrint) error {
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	for _, q := range []string{
		"DROP TABLE IF EXISTS loadtest_rows",
		"DROP TABLE IF EXISTS persons",
		"CREATE TABLE persons (id uuid NOT NULL, body bytea NOT NULL)",
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	next, stop := iter.Pull2(rows)
	defer stop()
	row := make([]any, 2)
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"persons"}, []string{"id", "body"}, pgx.CopyFromFunc(func() ([]any, error) {
		id, body, ok := next()
		if !ok {
			return nil, nil
		}
		u, err := uuid.Parse(id)
		if err != nil {
			return nil, fmt.Errorf("row id %q: %w", id, err)
		}
		row[0], row[1] = pgtype.UUID{Bytes: u, Valid: true}, body
		return row, nil
	}))
	if err != nil {
		return fmt.Errorf("COPY persons: %w", err)
	}
	if n != want.Rows {
		return fmt.Errorf("COPY persons: %d rows, the rows gave %d when read before", n, want.Rows)
	}
	for _, q := range []string{
		"ALTER TABLE persons ADD PRIMARY KEY (id)",
		"CREATE TABLE loadtest_rows (rows bigint NOT NULL, bytes bigint NOT NULL, sum text NOT NULL)",
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if _, err := tx.Exec(ctx, "INSERT INTO loadtest_rows VALUES ($1, $2, $3)", want.Rows, want.Bytes, want.Sum); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	_, err = c.Exec(ctx, "VACUUM (FREEZE, ANALYZE) persons")
	return err
}

// prewarm reads the table and its key into shared_buffers (pg_prewarm, a
// contrib module Debian's package ships), so that the first measured
// reads do not pay for filling the cache. Without the module the cache
// fills as the reads go.
func prewarm(ctx context.Context, c *pgx.Conn) error {
	if _, err := c.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_prewarm"); err != nil {
		return nil //nolint:nilerr // optional: reads warm the cache themselves
	}
	_, err := c.Exec(ctx, "SELECT pg_prewarm('persons'), pg_prewarm('persons_pkey')")
	return err
}
