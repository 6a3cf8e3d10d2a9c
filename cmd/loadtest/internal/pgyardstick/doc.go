// Package pgyardstick is the yardstick of cmd/loadtest's lookups' run
// that a user might build instead of lookupd: net/http and PostgreSQL
// (pgx) holding the same people and answering GET person with the bytes
// lookupd answered (StartPostgres), on Debian's PostgreSQL in a cluster
// made once and reused (DefaultPostgresDir). Where PostgreSQL is not
// installed it says so (ErrNoPostgres) and the run goes on without it.
package pgyardstick
