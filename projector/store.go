// Package projector keeps the read model of the lookup service: it consumes
// the v1 event contract (docs/events.md) from a NATS JetStream stream
// and applies it, in stream order, to a local Badger store, which the query
// side reads.
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
//
// Signers are keyed under their consumer, so the signers of one consumer are
// one prefix scan ("s" <consumer_id> "."), in signer-id order.
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
// encryption at rest so that they are never readable in the meantime.)
//
// The checkpoint is written in the same Badger transaction as the effects of
// the events it covers, so the store is always the projection of a prefix of
// the stream. Writes are not fsynced per transaction (Badger SyncWrites off):
// a process crash loses nothing (the OS holds the written pages), an OS crash
// may lose the last transactions as a whole, checkpoint included, and they are
// projected again from the stream.
package projector

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/lookup/persons/events"
)

// Errors of Open and ReadKeyFile.
var (
	// ErrStoreLocked is returned (wrapped, naming the directory) by Open when
	// another process holds the store.
	ErrStoreLocked = errors.New("store is locked by another process")
	// ErrEncryptionKey is returned (wrapped, with the actual problem) by Open
	// when the encryption key is not 16, 24 or 32 bytes ("key is 20 bytes,
	// want 16, 24 or 32"), missing for an encrypted store ("the store is
	// encrypted and no key was given"), given for an unencrypted one ("the
	// store is not encrypted but a key was given") or wrong ("the key does
	// not decrypt this store"), and by ReadKeyFile when a file holds no key.
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

	// ident is the encoded identity of the stream the projector writes from
	// (key "m" "stream"), written with every batch; nil until bound.
	ident []byte

	// versions caches entity versions for the writer (see versionCache).
	versions versionCache

	// applyFault, when set (tests), is called before each write transaction;
	// an error it returns fails the transaction as a store failure would.
	applyFault func() error
}

// Open opens (creating if needed) the read model in dir.
//
// It returns an error wrapping ErrStoreLocked, naming dir, when another
// process holds the store, and one wrapping ErrEncryptionKey when the key is
// wrong, missing for an encrypted store, given for an unencrypted one, or not
// 16, 24 or 32 bytes long. A wrong key reads and writes no data.
func Open(dir string, opts StoreOptions) (*Store, error) {
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
	if opts.memTableSize > 0 {
		bopts = bopts.WithMemTableSize(opts.memTableSize).WithValueThreshold(1 << 10)
	}
	if opts.EncryptionKey != nil {
		size := opts.indexCacheSize
		if size == 0 {
			size = 64 << 20
		}
		bopts = bopts.WithEncryptionKey(opts.EncryptionKey).WithIndexCacheSize(size)
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
	return &Store{db: db, dir: dir, logger: logger}, nil
}

// storeEncrypted reports whether the Badger store in dir is encrypted, false
// if that cannot be told. Badger's key registry starts with a 16-byte IV and
// the sanity text "Hello Badger", stored as is when the store is not
// encrypted and encrypted with the key otherwise.
func storeEncrypted(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, badger.KeyRegistryFileName))
	if err != nil || len(b) < 16+len(badgerSanityText) {
		return true
	}
	return string(b[16:16+len(badgerSanityText)]) != badgerSanityText
}

// badgerSanityText is Badger's key registry sanity text.
const badgerSanityText = "Hello Badger"

// Close closes the store. Reads after Close fail.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close store %s: %w", s.dir, err)
	}
	return nil
}

// ReadKeyFile reads an AES key file. The file holds either the hex (32, 48
// or 64 hex digits) or standard base64 encoding of a 16, 24 or 32-byte key as
// text, surrounding white space allowed, or exactly 16, 24 or 32 raw bytes.
// Text is tried first (so a 32-character hex or base64 text is decoded, not
// taken as a raw key). Anything
// else is an error wrapping ErrEncryptionKey; the error never contains the
// file's content.
func ReadKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	// Text first: a random raw key is hex or base64 text by accident with
	// negligible probability, while hex of a 16-byte key is itself 32 bytes.
	text := bytes.TrimSpace(b)
	if k, err := hex.DecodeString(string(text)); err == nil && validKeyLen(len(k)) {
		return k, nil
	}
	if k, err := base64.StdEncoding.DecodeString(string(text)); err == nil && validKeyLen(len(k)) {
		return k, nil
	}
	if validKeyLen(len(b)) {
		return b, nil
	}
	return nil, fmt.Errorf("read key file %s: %w: want 16, 24 or 32 raw bytes, or their hex or base64 text (file holds %d bytes)", path, ErrEncryptionKey, len(b))
}

func validKeyLen(n int) bool { return n == 16 || n == 24 || n == 32 }

// Person returns the consumer, else the business contact, with that id (any
// case). It returns events.ErrNotFound if neither exists or it was deleted.
func (s *Store) Person(ctx context.Context, id string) (events.Person, error) {
	if err := ctx.Err(); err != nil {
		return events.Person{}, err
	}
	id = strings.ToLower(id)
	var p events.Person
	err := s.db.View(func(txn *badger.Txn) error {
		for _, t := range []struct {
			tag byte
			typ events.PersonType
		}{{tagConsumer, events.PersonTypeConsumer}, {tagContact, events.PersonTypeBusinessContact}} {
			v, ok, err := getLive(txn, entityKey(t.tag, id))
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			p, err = decodePerson(v)
			if err != nil {
				return err
			}
			p.ID, p.Type = id, t.typ
			return nil
		}
		return events.ErrNotFound
	})
	if err != nil {
		return events.Person{}, err
	}
	return p, nil
}

// Signers returns the consumer with that id (any case) and its signers, in
// signer-id order. It returns events.ErrNotFound if the consumer is unknown
// or deleted; a consumer without signers is returned with an empty slice, so
// that the caller can check whose consumer it is before answering.
func (s *Store) Signers(ctx context.Context, consumerID string) (events.Person, []events.Signer, error) {
	if err := ctx.Err(); err != nil {
		return events.Person{}, nil, err
	}
	consumerID = strings.ToLower(consumerID)
	var (
		p       events.Person
		signers []events.Signer
	)
	err := s.db.View(func(txn *badger.Txn) error {
		v, ok, err := getLive(txn, entityKey(tagConsumer, consumerID))
		if err != nil {
			return err
		}
		if !ok {
			return events.ErrNotFound
		}
		if p, err = decodePerson(v); err != nil {
			return err
		}
		p.ID, p.Type = consumerID, events.PersonTypeConsumer
		prefix := signerPrefix(consumerID)
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 16, Prefix: prefix})
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			item := it.Item()
			err := item.Value(func(v []byte) error {
				h, rest, err := decodeHeader(v)
				if err != nil {
					return err
				}
				if h.deleted {
					return nil
				}
				sg, err := decodeSigner(rest)
				if err != nil {
					return err
				}
				sg.ConsumerID = consumerID
				sg.SignerID = string(item.Key()[len(prefix):])
				signers = append(signers, sg)
				return nil
			})
			if err != nil {
				return fmt.Errorf("read signer %q: %w", item.Key(), err)
			}
		}
		return nil
	})
	if err != nil {
		return events.Person{}, nil, err
	}
	return p, signers, nil
}

// Checkpoint returns the stream sequence of the last processed event (applied,
// skipped or dead-lettered), 0 if none.
func (s *Store) Checkpoint() (uint64, error) {
	seq, _, err := s.checkpoint()
	return seq, err
}

// checkpoint returns the checkpoint's sequence and the stream time of that event.
func (s *Store) checkpoint() (uint64, time.Time, error) {
	var (
		seq uint64
		ts  time.Time
	)
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(keyCheckpoint)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if len(v) != 16 {
				return fmt.Errorf("corrupt checkpoint: %d bytes", len(v))
			}
			seq = binary.BigEndian.Uint64(v)
			if n := int64(binary.BigEndian.Uint64(v[8:])); n != 0 {
				ts = time.Unix(0, n).UTC()
			}
			return nil
		})
	})
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("read checkpoint: %w", err)
	}
	return seq, ts, nil
}

// ---- keys ----

const (
	tagMeta     = 'm'
	tagConsumer = 'c'
	tagContact  = 'b'
	tagSigner   = 's'
)

var keyCheckpoint = []byte{tagMeta, 'c', 'h', 'e', 'c', 'k', 'p', 'o', 'i', 'n', 't'}

var keyStream = []byte{tagMeta, 's', 't', 'r', 'e', 'a', 'm'}

// streamIdentity identifies one incarnation of a stream: a stream deleted
// and created again under the same name has another creation time.
type streamIdentity struct {
	name    string
	created time.Time
}

func (id streamIdentity) String() string {
	return fmt.Sprintf("%q created %s", id.name, id.created.UTC().Format(time.RFC3339Nano))
}

func (id streamIdentity) equal(o streamIdentity) bool {
	return id.name == o.name && id.created.UnixNano() == o.created.UnixNano()
}

func encodeIdentity(id streamIdentity) []byte {
	v := make([]byte, 8, 8+len(id.name))
	binary.BigEndian.PutUint64(v, uint64(id.created.UnixNano()))
	return append(v, id.name...)
}

// streamIdentity returns the identity of the stream the store's checkpoint
// belongs to, ok false if none is recorded.
func (s *Store) streamIdentity() (id streamIdentity, ok bool, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(keyStream)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if len(v) < 8 {
				return fmt.Errorf("corrupt stream identity: %d bytes", len(v))
			}
			id = streamIdentity{name: string(v[8:]), created: time.Unix(0, int64(binary.BigEndian.Uint64(v))).UTC()}
			ok = true
			return nil
		})
	})
	if err != nil {
		return streamIdentity{}, false, fmt.Errorf("read stream identity: %w", err)
	}
	return id, ok, nil
}

// bindStream makes id the stream identity written with every batch, and
// records it now if record is set (a fresh store, at first contact).
func (s *Store) bindStream(id streamIdentity, record bool) error {
	v := encodeIdentity(id)
	if record {
		err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(keyStream, v) })
		if err != nil {
			return fmt.Errorf("record stream identity: %w", err)
		}
	}
	s.ident = v
	return nil
}

func entityKey(tag byte, id string) []byte {
	k := make([]byte, 0, 1+len(id))
	k = append(k, tag)
	return append(k, id...)
}

func signerPrefix(consumerID string) []byte {
	k := make([]byte, 0, 2+len(consumerID))
	k = append(k, tagSigner)
	k = append(k, consumerID...)
	return append(k, '.')
}

func signerKey(consumerID, signerID string) []byte {
	k := make([]byte, 0, 2+len(consumerID)+len(signerID))
	k = append(k, tagSigner)
	k = append(k, consumerID...)
	k = append(k, '.')
	return append(k, signerID...)
}

// ---- values ----

const formatV1 = 1

const flagDeleted = 1

const (
	sflagHIPAA = 1 << iota
	sflagAddress
	sflagPhone
)

var errCorrupt = errors.New("corrupt value")

type header struct {
	version uint64
	deleted bool
}

func appendHeader(b []byte, version uint64, deleted bool) []byte {
	var flags byte
	if deleted {
		flags |= flagDeleted
	}
	b = append(b, formatV1, flags)
	return binary.AppendUvarint(b, version)
}

func decodeHeader(v []byte) (header, []byte, error) {
	if len(v) < 3 || v[0] != formatV1 {
		return header{}, nil, errCorrupt
	}
	ver, n := binary.Uvarint(v[2:])
	if n <= 0 {
		return header{}, nil, errCorrupt
	}
	return header{version: ver, deleted: v[1]&flagDeleted != 0}, v[2+n:], nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// reader decodes the fields of a value; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) str() string {
	if r.err != nil {
		return ""
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || uint64(len(r.b)-k) < n {
		r.err = errCorrupt
		return ""
	}
	s := string(r.b[k : k+int(n)])
	r.b = r.b[k+int(n):]
	return s
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.err = errCorrupt
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func encodePerson(version uint64, businessID, first, middle, last string) []byte {
	b := make([]byte, 0, 16+len(businessID)+len(first)+len(middle)+len(last))
	b = appendHeader(b, version, false)
	b = appendString(b, businessID)
	b = appendString(b, first)
	b = appendString(b, middle)
	return appendString(b, last)
}

// decodePerson decodes the fields of a live consumer or contact value (after
// the header); ID and Type are left for the caller.
func decodePerson(rest []byte) (events.Person, error) {
	r := reader{b: rest}
	p := events.Person{BusinessID: r.str(), FirstName: r.str(), MiddleName: r.str(), LastName: r.str()}
	return p, r.err
}

func encodeSigner(version uint64, s *events.Signer) []byte {
	b := make([]byte, 0, 160)
	b = appendHeader(b, version, false)
	b = appendString(b, s.FirstName)
	b = appendString(b, s.MiddleName)
	b = appendString(b, s.LastName)
	b = appendString(b, string(s.AccountAccess))
	b = appendString(b, string(s.Status))
	b = appendString(b, string(s.Type))
	var f byte
	if s.HIPAAAuthorized {
		f |= sflagHIPAA
	}
	if s.Address != nil {
		f |= sflagAddress
	}
	if s.Phone != nil {
		f |= sflagPhone
	}
	b = append(b, f)
	if a := s.Address; a != nil {
		b = appendString(b, a.Line1)
		b = appendString(b, a.Line2)
		b = appendString(b, a.City)
		b = appendString(b, a.State)
		b = appendString(b, a.ZipCode)
		b = appendString(b, a.Country)
	}
	if p := s.Phone; p != nil {
		b = appendString(b, p.CountryCode)
		b = appendString(b, p.AreaCode)
		b = appendString(b, p.Number)
		b = appendString(b, p.Extension)
	}
	b = appendString(b, s.SSN)
	return appendString(b, s.DateOfBirth)
}

// decodeSigner decodes the fields of a live signer value (after the header);
// SignerID and ConsumerID are left for the caller.
func decodeSigner(rest []byte) (events.Signer, error) {
	r := reader{b: rest}
	s := events.Signer{
		FirstName:     r.str(),
		MiddleName:    r.str(),
		LastName:      r.str(),
		AccountAccess: events.AccountAccess(r.str()),
		Status:        events.SignerStatus(r.str()),
		Type:          events.SignerType(r.str()),
	}
	f := r.byte()
	s.HIPAAAuthorized = f&sflagHIPAA != 0
	if f&sflagAddress != 0 {
		s.Address = &events.Address{Line1: r.str(), Line2: r.str(), City: r.str(), State: r.str(), ZipCode: r.str(), Country: r.str()}
	}
	if f&sflagPhone != 0 {
		s.Phone = &events.Phone{CountryCode: r.str(), AreaCode: r.str(), Number: r.str(), Extension: r.str()}
	}
	s.SSN = r.str()
	s.DateOfBirth = r.str()
	return s, r.err
}

// getLive returns a copy of the fields of the live (not deleted) value at
// key, ok false when the key is absent or a tombstone.
func getLive(txn *badger.Txn, key []byte) ([]byte, bool, error) {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v, err := item.ValueCopy(nil)
	if err != nil {
		return nil, false, err
	}
	h, rest, err := decodeHeader(v)
	if err != nil {
		return nil, false, fmt.Errorf("read %q: %w", key, err)
	}
	if h.deleted {
		return nil, false, nil
	}
	return rest, true, nil
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

func badgerIterOpts(prefix []byte) badger.IteratorOptions {
	return badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 16, Prefix: prefix}
}
