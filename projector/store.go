// Package projector keeps the read model of the lookup service: it consumes
// the v1 event contract (docs/events.md) from a NATS JetStream stream
// and applies it, in stream order, to a local Badger store, which the query
// side reads. It also writes and restores snapshots of the store.
//
// Who imports it: lookupd's own rooms (internal/replica runs it over a
// replica's life; cmd/lookupd wires it) and Go programs that embed a read
// model of the stream (a batch job, a second read side); the key layout
// below is its own and not a contract, the Store's methods are.
//
// # Key layout
//
// Every key starts with a one-byte table tag; ids are the lower-case
// canonical UUID strings that events.Decode produces.
//
//	"m" "checkpoint"                     -> checkpoint: 8-byte big-endian stream sequence of the
//	                                        last processed event, 8-byte big-endian unix nanos of
//	                                        its stream timestamp
//	"m" "stream"                         -> identity of the stream the checkpoint belongs to:
//	                                        8-byte big-endian unix nanos of its creation time
//	                                        (jetstream.StreamInfo.Created), then its name
//	"c" <consumer_id>                    -> consumer record or tombstone
//	"b" <contact_id>                     -> business contact record or tombstone
//	"s" <consumer_id> "." <signer_id>    -> signer record or tombstone
//	"l" <consumer_id>                    -> the consumer's signer set: a copy of its live
//	                                        signers' fields, in signer-id order, and of the
//	                                        consumer's own fields (signerset.go)
//	"m" "signersets"                     -> 8-byte big-endian sequence of the checkpoint the
//	                                        signer sets were last kept at, then the byte of
//	                                        their layout (setsLayout)
//	"x" <8-byte big-endian sequence>     -> the record of a deletion applied (Deletions), at the
//	                                        deletion event's stream sequence: format (1), the
//	                                        entity's kind (events.Kind), 8-byte big-endian unix
//	                                        nanos of its stream time, then its id and consumer id
//	                                        (uvarint length, bytes; "" for a contact); ids only
//
// Signers are keyed under their consumer, so the signers of one consumer are
// one prefix scan ("s" <consumer_id> "."), in signer-id order. A read of
// them and of their consumer is one point lookup of the consumer's signer
// set instead, which the writer keeps in the same transaction as the
// records (up to 64 signers; past that the set says so and the read scans).
//
// # Values
//
// One value per entity holds both the last entity version seen and the
// current state, so applying an event is one Get and one Set (and often no
// Get: the writer keeps the versions of recently seen entities in a bounded
// in-memory cache that only ever holds committed versions):
//
//	byte 0      format (1)
//	byte 1      flags: bit 0 = tombstone (deleted; no fields follow)
//	uvarint     entity version (the entityversion of the last applied event)
//	fields      consumer/contact: business_id, first, middle, last name;
//	            signer: first, middle, last name, account_access, status, type,
//	            a flag byte (hipaa, has address, has phone), the address (line1,
//	            line2, city, state, zip, country) and phone (country code, area
//	            code, number, extension) when present, SSN, date of birth.
//	            Each string is a uvarint length followed by its bytes.
//
// A deleted entity keeps a tombstone with its version, so a stale upsert never
// resurrects it. Deleting a consumer replaces each of its signers' records by
// a tombstone carrying the signer's own last version: the personal data is
// gone from the read model, and older re-deliveries of signer events still
// lose the version comparison. (Badger, a log-structured store, keeps the
// overwritten versions in its files until compaction discards them; use
// encryption at rest so that they are never readable in the meantime. A
// snapshot holds the newest version of each key only: restored into a
// fresh store it is a copy without them, which is how internal/replica
// compacts a model.) The transaction that applies a deletion also writes
// its record ("x"), so that the deletions a model has applied can be
// listed (Store.Deletions) and their erasure followed.
//
// The checkpoint is written in the same Badger transaction as the effects of
// the events it covers, so the store is always the projection of a prefix of
// the stream. Writes are not fsynced per transaction (Badger SyncWrites off):
// a process crash loses nothing (the OS holds the written pages), an OS crash
// may lose the last transactions as a whole, checkpoint included, and they are
// projected again from the stream.
package projector

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
)

// Errors of Open.
var (
	// ErrStoreLocked is returned (wrapped, naming the directory) by Open when
	// another process holds the store.
	ErrStoreLocked = errors.New("store is locked by another process")
	// ErrEncryptionKey is returned (wrapped, with the actual problem) by Open
	// when the encryption key is not 16, 24 or 32 bytes ("key is 20 bytes,
	// want 16, 24 or 32"), missing for an encrypted store ("the store is
	// encrypted and no key was given"), given for an unencrypted one ("the
	// store is not encrypted but a key was given") or wrong ("the key does
	// not decrypt this store").
	ErrEncryptionKey = errors.New("encryption key rejected")
)

// StoreOptions configures Open.
type StoreOptions struct {
	// EncryptionKey, when non-nil, is the AES key (16, 24 or 32 bytes) the
	// store is encrypted with at rest. nil: unencrypted.
	EncryptionKey []byte
	// Logger receives Badger's warnings and errors (its informational
	// messages at debug level). nil: discard.
	Logger *slog.Logger
	// MemoryBudget, when non-zero, is the memory in bytes (resident set)
	// that the process holding the store aims to stay within, at least
	// MinMemoryBudget: Badger's memtables, block and index caches, value log
	// files and compactors are sized to a share of it (see
	// withMemoryBudget). The caller should keep the Go heap within 3/4 of
	// it (debug.SetMemoryLimit). 0: Badger's defaults, which let it grow to
	// several hundred MiB under load.
	MemoryBudget int64

	// indexCacheSize overrides the index cache size used with encryption.
	indexCacheSize int64
	// memTableSize overrides Badger's memtable size, which bounds the size of
	// a transaction (tests use it to provoke ErrTxnTooBig).
	memTableSize int64
}

// Store is the Badger read model. Its reads run in their own MVCC snapshot
// and never wait for the projector's writes. A Store is safe for concurrent
// use; only one Projector may write to it.
type Store struct {
	db     *badger.DB
	dir    string
	logger *slog.Logger
	// stopAdvice stops the advice of the tables' mappings (adviseTables).
	stopAdvice func()

	// ident is the encoded identity of the stream the projector writes from
	// (key "m" "stream"), written with every batch; nil until bound.
	ident []byte

	// versions caches entity versions for the writer (see versionCache).
	versions versionCache
	// emptinessChecked: checkEmpty has run; foundEmpty: it found no
	// entity (writer only).
	emptinessChecked, foundEmpty bool
	// setsDeferred: the writer keeps no signer sets until finishSets makes
	// them in one pass (deferSetsIfEmpty, signersetbuild.go). Set and
	// cleared by the writer; read by the readers and by
	// Projector.markCaughtUp on any goroutine.
	setsDeferred atomic.Bool
	// setsBuildStarted: buildSignerSets has begun writing sets (writer
	// only): a build stopped part-way left some.
	setsBuildStarted bool

	hooks testHooks // the tests' (hooks.go); none in production
}

// Open opens (creating if needed) the read model in dir.
//
// It returns an error wrapping ErrStoreLocked, naming dir, when another
// process holds the store, and one wrapping ErrEncryptionKey when the key is
// wrong, missing for an encrypted store, given for an unencrypted one, or not
// 16, 24 or 32 bytes long. A wrong key reads and writes no data.
func Open(dir string, opts StoreOptions) (*Store, error) {
	return open(dir, opts)
}

// open is Open with the test hooks that opts set.
func open(dir string, opts StoreOptions, hooks ...option) (*Store, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.EncryptionKey != nil {
		if n := len(opts.EncryptionKey); n != 16 && n != 24 && n != 32 {
			return nil, fmt.Errorf("open store %s: %w: key is %d bytes, want 16, 24 or 32", dir, ErrEncryptionKey, n)
		}
	}
	bopts := badger.DefaultOptions(dir).
		WithLogger(badgerLogger{logger}).
		WithDetectConflicts(false). // a single writer: the projector
		WithNumVersionsToKeep(1).
		WithMetricsEnabled(false)
	if opts.MemoryBudget != 0 {
		var err error
		if bopts, err = withMemoryBudget(bopts, opts.MemoryBudget); err != nil {
			return nil, fmt.Errorf("open store %s: %w", dir, err)
		}
		// Level 0 holds the flushed memtables (at the default budget,
		// tables of about 6 MB). Merged into the next level once two
		// wait, as withMemoryBudget sets, they rewrite what of that level
		// they overlap: with random ids, all of it, every few MB of new
		// tables. The requests' reads are point reads, which skip a table
		// by its Bloom filter: at 15 (writes stall at 30) a rebuild of 2M
		// events writes 0.64x the bytes in 0.72-0.75x the time, and a
		// point read costs the same within noise (docs/performance.md,
		// "Level 0 (issue 45, 2026-12-08)").
		bopts = bopts.WithNumLevelZeroTables(15).WithNumLevelZeroTablesStall(30)
	}
	if opts.memTableSize > 0 {
		bopts = bopts.WithMemTableSize(opts.memTableSize).WithValueThreshold(1 << 10)
	}
	if opts.EncryptionKey != nil {
		size := opts.indexCacheSize
		switch {
		case size == 0 && opts.MemoryBudget != 0:
			size = opts.MemoryBudget / 16
		case size == 0:
			size = 64 << 20
		}
		bopts = bopts.WithEncryptionKey(opts.EncryptionKey).WithIndexCacheSize(size)
		if opts.MemoryBudget != 0 {
			// Decrypted blocks: Badger requires a block cache for them.
			bopts = bopts.WithBlockCacheSize(opts.MemoryBudget / 8)
		}
	}
	db, err := badger.Open(bopts)
	if err != nil {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "Cannot acquire directory lock"):
			return nil, fmt.Errorf("open store %s: %w", dir, ErrStoreLocked)
		case errors.Is(err, badger.ErrEncryptionKeyMismatch) || strings.Contains(msg, badger.ErrEncryptionKeyMismatch.Error()):
			switch {
			case opts.EncryptionKey == nil:
				return nil, fmt.Errorf("open store %s: %w: the store is encrypted and no key was given", dir, ErrEncryptionKey)
			case !storeEncrypted(dir):
				return nil, fmt.Errorf("open store %s: %w: the store is not encrypted but a key was given", dir, ErrEncryptionKey)
			}
			return nil, fmt.Errorf("open store %s: %w: the key does not decrypt this store", dir, ErrEncryptionKey)
		}
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	s := &Store{db: db, dir: dir, logger: logger, stopAdvice: adviseTables(dir), hooks: newTestHooks(hooks)}
	s.versions.max = versionCacheEntries(opts.MemoryBudget)
	if err := s.ensureSignerSets(); err != nil {
		s.stopAdvice()
		return nil, errors.Join(err, db.Close())
	}
	return s, nil
}

// storeEncrypted reports whether the Badger store in dir is encrypted, false
// if that cannot be told. Badger's key registry starts with a 16-byte IV and
// the sanity text "Hello Badger", stored as is when the store is not
// encrypted and encrypted with the key otherwise.
func storeEncrypted(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, badger.KeyRegistryFileName)) //nolint:gosec // G703: dir is the operator-configured store directory
	if err != nil || len(b) < 16+len(badgerSanityText) {
		return true
	}
	return string(b[16:16+len(badgerSanityText)]) != badgerSanityText
}

// badgerSanityText is Badger's key registry sanity text.
const badgerSanityText = "Hello Badger"

// Close closes the store. Reads after Close fail.
func (s *Store) Close() error {
	s.stopAdvice()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close store %s: %w", s.dir, err)
	}
	return nil
}

// badgerLogger adapts slog to Badger's logger; Badger's informational
// chatter goes to debug level. Badger never logs values, so no personal data
// reaches the log through it.
type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) Errorf(f string, a ...any) {
	b.l.Error("badger: " + strings.TrimSpace(fmt.Sprintf(f, a...)))
}

func (b badgerLogger) Warningf(f string, a ...any) {
	b.l.Warn("badger: " + strings.TrimSpace(fmt.Sprintf(f, a...)))
}

func (b badgerLogger) Infof(f string, a ...any) {
	b.l.Debug("badger: " + strings.TrimSpace(fmt.Sprintf(f, a...)))
}

func (b badgerLogger) Debugf(f string, a ...any) {
	b.l.Debug("badger: " + strings.TrimSpace(fmt.Sprintf(f, a...)))
}

var _ badger.Logger = badgerLogger{}
