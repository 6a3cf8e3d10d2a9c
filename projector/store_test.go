package projector

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/lookup/persons/events"
)

func newID() string { return uuid.NewString() }

func consumerEv(id string, v uint64, first string) events.Event {
	return events.Event{ID: newID(), Source: "test", Type: events.TypeConsumerUpserted, EntityVersion: v,
		Data: events.Consumer{ConsumerID: id, BusinessID: testBiz, FirstName: first, LastName: "Last"}}
}

func consumerDelEv(id string, v uint64) events.Event {
	return events.Event{ID: newID(), Source: "test", Type: events.TypeConsumerDeleted, EntityVersion: v,
		Data: events.ConsumerDeleted{ConsumerID: id}}
}

func contactEv(id string, v uint64, first string) events.Event {
	return events.Event{ID: newID(), Source: "test", Type: events.TypeBusinessContactUpserted, EntityVersion: v,
		Data: events.BusinessContact{ContactID: id, BusinessID: testBiz, FirstName: first, MiddleName: "M", LastName: "Contact"}}
}

func contactDelEv(id string, v uint64) events.Event {
	return events.Event{ID: newID(), Source: "test", Type: events.TypeBusinessContactDeleted, EntityVersion: v,
		Data: events.BusinessContactDeleted{ContactID: id}}
}

func fullSigner(cid, sid, first string) events.Signer {
	return events.Signer{SignerID: sid, ConsumerID: cid, FirstName: first, MiddleName: "Q", LastName: "Signer",
		HIPAAAuthorized: true, AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusActive,
		Type:    events.SignerTypeGuardian,
		Address: &events.Address{Line1: "1 Main St", Line2: "Apt 2", City: "Springfield", State: "IL", ZipCode: "62701", Country: "US"},
		Phone:   &events.Phone{CountryCode: "1", AreaCode: "217", Number: "5550100", Extension: "12"},
		SSN:     "123456789", DateOfBirth: "1970-01-31"}
}

func signerEv(cid, sid string, v uint64, first string) events.Event {
	return events.Event{ID: newID(), Source: "test", Type: events.TypeSignerUpserted, EntityVersion: v,
		Data: fullSigner(cid, sid, first)}
}

func signerDelEv(cid, sid string, v uint64) events.Event {
	return events.Event{ID: newID(), Source: "test", Type: events.TypeSignerDeleted, EntityVersion: v,
		Data: events.SignerDeleted{ConsumerID: cid, SignerID: sid}}
}

// applyAll applies evs as one batch with sequences starting after the checkpoint.
func applyAll(t *testing.T, s *Store, evs ...events.Event) batchStats {
	t.Helper()
	cp, err := s.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	items := make([]item, len(evs))
	for i, e := range evs {
		items[i] = item{seq: cp + uint64(i) + 1, time: time.Unix(1700000000, int64(i)).UTC(), valid: true, ev: e}
	}
	st, err := s.applyBatch(items)
	if err != nil {
		t.Fatalf("applyBatch: %v", err)
	}
	return st
}

func firstName(t *testing.T, s *Store, id string) string {
	t.Helper()
	p, err := s.Person(t.Context(), id)
	if errors.Is(err, events.ErrNotFound) {
		return "<not found>"
	}
	if err != nil {
		t.Fatalf("Person(%s): %v", id, err)
	}
	return p.FirstName
}

func signerNames(t *testing.T, s *Store, cid string) string {
	t.Helper()
	_, sg, err := s.Signers(t.Context(), cid)
	if errors.Is(err, events.ErrNotFound) {
		return "<not found>"
	}
	if err != nil {
		t.Fatalf("Signers(%s): %v", cid, err)
	}
	names := make([]string, len(sg))
	for i, x := range sg {
		names[i] = x.FirstName
	}
	return strings.Join(names, ",")
}

func TestApplyRules(t *testing.T) {
	c1, c2, k1 := newID(), newID(), newID()
	// Signer ids in a known order so that signer-id order is checkable.
	s1, s2, s3 := "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002", "00000000-0000-4000-8000-000000000003"
	tests := []struct {
		name   string
		evs    []events.Event
		stats  batchStats
		person map[string]string // id -> first name or <not found>
		signrs map[string]string // consumer id -> signer first names or <not found>
	}{
		{
			name:   "consumer upsert",
			evs:    []events.Event{consumerEv(c1, 1, "Ann")},
			stats:  batchStats{applied: 1},
			person: map[string]string{c1: "Ann", strings.ToUpper(c1): "Ann", c2: "<not found>"},
		},
		{
			name:   "business contact upsert",
			evs:    []events.Event{contactEv(k1, 1, "Kim")},
			stats:  batchStats{applied: 1},
			person: map[string]string{k1: "Kim"},
		},
		{
			name:   "consumer is found before a contact with the same id",
			evs:    []events.Event{contactEv(c1, 1, "Kim"), consumerEv(c1, 1, "Ann")},
			stats:  batchStats{applied: 2},
			person: map[string]string{c1: "Ann"},
		},
		{
			name:   "newer version replaces",
			evs:    []events.Event{consumerEv(c1, 1, "Ann"), consumerEv(c1, 2, "Bea")},
			stats:  batchStats{applied: 2},
			person: map[string]string{c1: "Bea"},
		},
		{
			name:   "out of order version skipped",
			evs:    []events.Event{consumerEv(c1, 5, "Ann"), consumerEv(c1, 3, "Old")},
			stats:  batchStats{applied: 1, skipped: 1},
			person: map[string]string{c1: "Ann"},
		},
		{
			name:   "duplicate version skipped",
			evs:    []events.Event{contactEv(k1, 2, "Kim"), contactEv(k1, 2, "Dup")},
			stats:  batchStats{applied: 1, skipped: 1},
			person: map[string]string{k1: "Kim"},
		},
		{
			name:   "delete then late upsert does not resurrect",
			evs:    []events.Event{consumerEv(c1, 1, "Ann"), consumerDelEv(c1, 3), consumerEv(c1, 2, "Late"), consumerEv(c1, 3, "Same")},
			stats:  batchStats{applied: 2, skipped: 2},
			person: map[string]string{c1: "<not found>"},
		},
		{
			name:   "delete before any upsert keeps its version",
			evs:    []events.Event{contactDelEv(k1, 4), contactEv(k1, 2, "Late")},
			stats:  batchStats{applied: 1, skipped: 1},
			person: map[string]string{k1: "<not found>"},
		},
		{
			name:   "newer upsert after delete re-creates",
			evs:    []events.Event{contactEv(k1, 1, "Kim"), contactDelEv(k1, 2), contactEv(k1, 3, "Again")},
			stats:  batchStats{applied: 3},
			person: map[string]string{k1: "Again"},
		},
		{
			name:   "signers in signer-id order",
			evs:    []events.Event{consumerEv(c1, 1, "Ann"), signerEv(c1, s3, 1, "C"), signerEv(c1, s1, 1, "A"), signerEv(c1, s2, 1, "B")},
			stats:  batchStats{applied: 4},
			signrs: map[string]string{c1: "A,B,C", c2: "<not found>"},
		},
		{
			name:   "signer delete and stale signer upsert",
			evs:    []events.Event{consumerEv(c1, 1, "Ann"), signerEv(c1, s1, 1, "A"), signerEv(c1, s2, 1, "B"), signerDelEv(c1, s1, 2), signerEv(c1, s1, 2, "Stale")},
			stats:  batchStats{applied: 4, skipped: 1},
			signrs: map[string]string{c1: "B"},
		},
		{
			name:   "consumer without signers is found with no signers",
			evs:    []events.Event{consumerEv(c1, 1, "Ann"), signerEv(c1, s1, 1, "A"), signerDelEv(c1, s1, 2)},
			stats:  batchStats{applied: 3},
			signrs: map[string]string{c1: ""},
		},
		{
			name:   "signer of unknown consumer is stored but not served until the consumer exists",
			evs:    []events.Event{signerEv(c2, s1, 1, "A"), signerEv(c2, s1, 2, "A2")},
			stats:  batchStats{applied: 2},
			signrs: map[string]string{c2: "<not found>"},
		},
		{
			name:   "same signer id under two consumers are two entities",
			evs:    []events.Event{consumerEv(c1, 1, "Ann"), consumerEv(c2, 1, "Bob"), signerEv(c1, s1, 3, "A"), signerEv(c2, s1, 1, "X")},
			stats:  batchStats{applied: 4},
			signrs: map[string]string{c1: "A", c2: "X"},
		},
		{
			name: "consumer deletion purges signers; stale re-deliveries lose; newer signer versions are stored but not served",
			evs: []events.Event{consumerEv(c1, 1, "Ann"), signerEv(c1, s1, 3, "A"), signerEv(c1, s2, 1, "B"),
				consumerDelEv(c1, 2), signerEv(c1, s1, 3, "Stale"), signerEv(c1, s2, 1, "Stale"), signerEv(c1, s2, 2, "B2")},
			stats:  batchStats{applied: 5, skipped: 2},
			person: map[string]string{c1: "<not found>"},
			signrs: map[string]string{c1: "<not found>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t, t.TempDir(), StoreOptions{})
			got := applyAll(t, s, tt.evs...)
			if got != tt.stats {
				t.Errorf("stats = %+v, want %+v", got, tt.stats)
			}
			for id, want := range tt.person {
				if got := firstName(t, s, id); got != want {
					t.Errorf("Person(%s).FirstName = %q, want %q", id, got, want)
				}
			}
			for id, want := range tt.signrs {
				if got := signerNames(t, s, id); got != want {
					t.Errorf("Signers(%s) = %q, want %q", id, got, want)
				}
			}
			cp, err := s.Checkpoint()
			if err != nil {
				t.Fatal(err)
			}
			if want := uint64(len(tt.evs)); cp != want {
				t.Errorf("Checkpoint = %d, want %d", cp, want)
			}
		})
	}
}

func TestRecordsRoundTrip(t *testing.T) {
	s := openStore(t, t.TempDir(), StoreOptions{})
	cid, sid1, sid2 := newID(), "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	full := fullSigner(cid, sid1, "Full")
	bare := events.Signer{SignerID: sid2, ConsumerID: cid, FirstName: "Bare", LastName: "Min",
		AccountAccess: events.AccountAccessNone, Status: events.SignerStatusPending, Type: events.SignerTypeParent}
	cons := events.Consumer{ConsumerID: cid, BusinessID: testBiz, FirstName: "Ann", MiddleName: "Mid", LastName: "Lee"}
	applyAll(t, s,
		events.Event{Type: events.TypeConsumerUpserted, EntityVersion: 1, Data: cons},
		events.Event{Type: events.TypeSignerUpserted, EntityVersion: 1, Data: full},
		events.Event{Type: events.TypeSignerUpserted, EntityVersion: 1, Data: bare},
	)
	p, sg, err := s.Signers(t.Context(), strings.ToUpper(cid))
	if err != nil {
		t.Fatalf("Signers: %v", err)
	}
	wantP := events.Person{ID: cid, BusinessID: testBiz, FirstName: "Ann", MiddleName: "Mid", LastName: "Lee", Type: events.PersonTypeConsumer}
	if p != wantP {
		t.Errorf("consumer = %+v, want %+v", p, wantP)
	}
	if want := []events.Signer{full, bare}; !reflect.DeepEqual(sg, want) {
		t.Errorf("signers = %+v\nwant %+v", sg, want)
	}
}

// TestTxnTooBig makes Badger's transactions tiny so that a batch, and a
// single consumer deletion with many signers, do not fit in one.
func TestTxnTooBig(t *testing.T) {
	s := openStore(t, t.TempDir(), StoreOptions{memTableSize: 1 << 20}) // ~1.5k entries per txn
	cid := newID()
	evs := []events.Event{consumerEv(cid, 1, "Ann")}
	for i := range 4000 {
		evs = append(evs, signerEv(cid, fmt.Sprintf("00000000-0000-4000-8000-%012d", i), 1, "S"))
	}
	st := applyAll(t, s, evs...)
	if st.applied != 4001 {
		t.Fatalf("applied = %d, want 4001", st.applied)
	}
	_, sg, err := s.Signers(t.Context(), cid)
	if err != nil || len(sg) != 4000 {
		t.Fatalf("Signers: %d signers, err %v; want 4000", len(sg), err)
	}
	st = applyAll(t, s, consumerDelEv(cid, 2), signerEv(cid, "00000000-0000-4000-8000-000000000007", 1, "Stale"))
	if st != (batchStats{applied: 1, skipped: 1}) {
		t.Fatalf("stats = %+v", st)
	}
	if got := countLiveSigners(t, s, cid); got != 0 {
		t.Errorf("%d live signer records after consumer deletion, want 0", got)
	}
	if cp, _ := s.Checkpoint(); cp != 4003 {
		t.Errorf("Checkpoint = %d, want 4003", cp)
	}
}

// TestStaleDeletionTooBigPurgesNothing: a consumer deletion too big for one
// transaction is purged in chunks first, but only when it is newer than the
// consumer; a stale one is skipped and every signer stays.
func TestStaleDeletionTooBigPurgesNothing(t *testing.T) {
	s := openStore(t, t.TempDir(), StoreOptions{memTableSize: 1 << 20})
	cid := newID()
	evs := []events.Event{consumerEv(cid, 5, "Ann")}
	for i := range 4000 {
		evs = append(evs, signerEv(cid, fmt.Sprintf("00000000-0000-4000-8000-%012d", i), 1, "S"))
	}
	applyAll(t, s, evs...)
	st := applyAll(t, s, consumerDelEv(cid, 3))
	if st != (batchStats{skipped: 1}) {
		t.Fatalf("stats = %+v, want one skipped", st)
	}
	if got := countLiveSigners(t, s, cid); got != 4000 {
		t.Errorf("%d live signers after a stale deletion, want 4000", got)
	}
}

// countLiveSigners counts the signer records of cid that are not tombstones,
// reading the store directly (Signers hides them when the consumer is gone).
func countLiveSigners(t *testing.T, s *Store, cid string) int {
	t.Helper()
	n := 0
	txn := s.db.NewTransaction(false)
	defer txn.Discard()
	prefix := signerPrefix(cid)
	it := txn.NewIterator(badgerIterOpts(prefix))
	defer it.Close()
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		v, err := it.Item().ValueCopy(nil)
		if err != nil {
			t.Fatal(err)
		}
		h, rest, err := decodeHeader(v)
		if err != nil {
			t.Fatal(err)
		}
		if !h.deleted {
			n++
		}
		if h.deleted && len(rest) != 0 {
			t.Errorf("tombstone %q carries %d bytes of data", it.Item().Key(), len(rest))
		}
	}
	return n
}

func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	openStore(t, dir, StoreOptions{})
	_, err := Open(dir, StoreOptions{})
	if !errors.Is(err, ErrStoreLocked) {
		t.Fatalf("second Open: err = %v, want ErrStoreLocked", err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q does not name the directory", err)
	}
}

// storeContains reports whether any file under dir contains b.
func storeContains(t *testing.T, dir string, b []byte) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(data, b) {
			found = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestEncryptionAtRest(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	const ssn, dob = "987654321", "1961-07-04"
	write := func(t *testing.T, dir string, key []byte) {
		t.Helper()
		s, err := Open(dir, StoreOptions{EncryptionKey: key})
		if err != nil {
			t.Fatal(err)
		}
		cid := newID()
		sg := fullSigner(cid, newID(), "Enc")
		sg.SSN, sg.DateOfBirth = ssn, dob
		applyAll(t, s, consumerEv(cid, 1, "Ann"), events.Event{Type: events.TypeSignerUpserted, EntityVersion: 1, Data: sg})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("unencrypted store holds the plaintext", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, nil)
		if !storeContains(t, dir, []byte(ssn)) || !storeContains(t, dir, []byte(dob)) {
			t.Fatal("plaintext SSN/date of birth not found in an unencrypted store: the scan cannot detect leaks")
		}
	})
	t.Run("encrypted store does not", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, key)
		if storeContains(t, dir, []byte(ssn)) {
			t.Error("SSN found in plaintext in the encrypted store")
		}
		if storeContains(t, dir, []byte(dob)) {
			t.Error("date of birth found in plaintext in the encrypted store")
		}
		for _, tc := range []struct {
			name string
			key  []byte
		}{
			{"no key", nil},
			{"wrong key", bytes.Repeat([]byte{8}, 32)},
			{"wrong length", []byte("short")},
		} {
			_, err := Open(dir, StoreOptions{EncryptionKey: tc.key})
			if !errors.Is(err, ErrEncryptionKey) {
				t.Errorf("%s: Open err = %v, want ErrEncryptionKey", tc.name, err)
			}
		}
		// The failed attempts touched nothing: the right key still reads the data.
		s := openStore(t, dir, StoreOptions{EncryptionKey: key})
		if cp, err := s.Checkpoint(); err != nil || cp != 2 {
			t.Errorf("after failed opens: Checkpoint = %d, %v; want 2", cp, err)
		}
	})
	t.Run("key given for an unencrypted store", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, nil)
		_, err := Open(dir, StoreOptions{EncryptionKey: key})
		if !errors.Is(err, ErrEncryptionKey) {
			t.Fatalf("Open err = %v, want ErrEncryptionKey", err)
		}
		s := openStore(t, dir, StoreOptions{})
		if cp, err := s.Checkpoint(); err != nil || cp != 2 {
			t.Errorf("after failed open: Checkpoint = %d, %v; want 2", cp, err)
		}
	})
}

// testEntityKey is the key of consumer number i (a canonical UUID).
func testEntityKey(i int) []byte {
	return entityKey(tagConsumer, fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i))
}

func TestVersionCache(t *testing.T) {
	c := versionCache{max: versionCacheMin}
	k1, k2 := testEntityKey(1), testEntityKey(2)
	c.begin()
	c.put(k1, 3)
	if v, ok := c.get(k1); !ok || v != 3 {
		t.Fatalf("pending get = %d, %v; want 3, true", v, ok)
	}
	c.begin() // the transaction was discarded: its versions are forgotten
	if _, ok := c.get(k1); ok {
		t.Fatal("version of a discarded transaction still cached")
	}
	c.put(k1, 4)
	c.commit()
	c.begin()
	c.put(k2, 1)
	if v, ok := c.get(k1); !ok || v != 4 {
		t.Fatalf("committed get = %d, %v; want 4, true", v, ok)
	}
	c.reset() // a write error: nothing is trusted
	if _, ok := c.get(k1); ok {
		t.Fatal("cache not emptied by reset")
	}
	c.begin()
	for i := range versionCacheMin + 10 {
		c.put(testEntityKey(i), 1)
	}
	c.commit()
	if n := len(c.committed); n > versionCacheMin+10 {
		t.Fatalf("cache holds %d entries", n)
	}
	c.begin()
	c.put(testEntityKey(-1), 1)
	c.commit()
	if n := len(c.committed); n > versionCacheMin {
		t.Errorf("cache holds %d entries, bound %d", n, versionCacheMin)
	}
}

// TestVersionCacheEntries: the cache holds what 1/16 of the budget holds,
// never fewer than versionCacheMin.
func TestVersionCacheEntries(t *testing.T) {
	for _, tc := range []struct {
		budget int64
		want   int
	}{
		{0, versionCacheMin},
		{MinMemoryBudget, versionCacheMin},
		{192 << 20, 192 << 20 / 16 / versionEntryBytes},
		{1 << 30, 1 << 30 / 16 / versionEntryBytes},
	} {
		if got := versionCacheEntries(tc.budget); got != tc.want {
			t.Errorf("versionCacheEntries(%d) = %d, want %d", tc.budget, got, tc.want)
		}
	}
}

// TestVersionKey: every entity key has one binary form and no two keys
// share one; any other key is not held.
func TestVersionKey(t *testing.T) {
	const id1, id2 = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "ffffffff-ffff-4fff-bfff-ffffffffffff"
	keys := [][]byte{
		entityKey(tagConsumer, id1), entityKey(tagContact, id1), entityKey(tagConsumer, id2),
		signerKey(id1, id2), signerKey(id2, id1), signerKey(id1, id1),
	}
	seen := map[versionKey]string{}
	for _, k := range keys {
		vk, ok := keyOf(k)
		if !ok {
			t.Fatalf("keyOf(%q) not ok", k)
		}
		if other, dup := seen[vk]; dup {
			t.Errorf("keyOf(%q) = keyOf(%q)", k, other)
		}
		seen[vk] = string(k)
	}
	if vk, _ := keyOf(entityKey(tagConsumer, id1)); vk[1] != 0x0a || vk[16] != 0x4d || vk[0] != tagConsumer {
		t.Errorf("keyOf(consumer %s) = %x", id1, vk)
	}
	for name, k := range map[string][]byte{
		"upper case":      entityKey(tagConsumer, strings.ToUpper(id1)),
		"no dashes":       entityKey(tagConsumer, strings.ReplaceAll(id1, "-", "")+"0000"),
		"dash misplaced":  entityKey(tagConsumer, "0a1b2c3d4-e5f-4a6b-8c7d-9e0f1a2b3c4d"),
		"not hex":         entityKey(tagConsumer, "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4g"),
		"signer tag, one": entityKey(tagSigner, id1),
		"consumer, two":   append(entityKey(tagConsumer, id1), "."+id2...),
		"signer, no dot":  append(entityKey(tagSigner, id1), "-"+id2...),
		"set key":         entityKey(tagSignerSet, id1),
		"checkpoint":      keyCheckpoint,
		"empty":           nil,
	} {
		if _, ok := keyOf(k); ok {
			t.Errorf("%s: keyOf(%q) ok", name, k)
		}
	}
}
