package projector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
)

// startServer runs an in-process nats-server with JetStream storing in
// storeDir, on port (-1: random).
func startServer(t testing.TB, storeDir string, port int) *server.Server {
	t.Helper()
	opts := testkit.NATSOptions(storeDir)
	opts.Port = port
	return testkit.RunNATS(t, opts)
}

// connect returns a JetStream context on url that reconnects forever.
func connect(t testing.TB, url string) jetstream.JetStream {
	t.Helper()
	_, js := testkit.ConnectNATS(t, url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	return js
}

func createStream(t testing.TB, js jetstream.JetStream) {
	t.Helper()
	testkit.PersonsStream(t, js)
}

// setup starts a server with the PERSONS stream and returns its JetStream.
func setup(t testing.TB) jetstream.JetStream {
	t.Helper()
	srv := startServer(t, t.TempDir(), -1)
	js := connect(t, srv.ClientURL())
	createStream(t, js)
	return js
}

// openStore opens the store in dir, with the test hooks that hooks set,
// closed when the test ends.
func openStore(t testing.TB, dir string, opts StoreOptions, hooks ...option) *Store {
	t.Helper()
	s, err := open(dir, opts, hooks...)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// wireMsg is one message to publish.
type wireMsg struct {
	subject string
	header  nats.Header // besides Nats-Msg-Id: a binary-mode event's ce- headers
	body    []byte
	msgID   string
	valid   bool
	ev      events.Event // when valid
}

func encodeMsg(t testing.TB, e events.Event) wireMsg {
	t.Helper()
	if e.ID == "" {
		e.ID = newID()
	}
	if e.Source == "" {
		e.Source = "test"
	}
	e.Type, _ = events.TypeOf(e.Data)
	body, err := events.Encode(e)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return wireMsg{subject: e.Subject(), body: body, msgID: e.ID, valid: true, ev: e}
}

// binaryMsg returns the valid message m in binary content mode: its
// event's attributes as ce- headers, its data as the body.
func binaryMsg(t testing.TB, m wireMsg) wireMsg {
	t.Helper()
	h, body, err := events.EncodeBinary(m.ev)
	if err != nil {
		t.Fatal(err)
	}
	m.header, m.body = h, body
	return m
}

// publishAll publishes msgs with async publish and waits for every ack.
func publishAll(t testing.TB, js jetstream.JetStream, msgs []wireMsg) {
	t.Helper()
	for i := 0; i < len(msgs); i += 4000 {
		chunk := msgs[i:min(i+4000, len(msgs))]
		for _, m := range chunk {
			nm := nats.NewMsg(m.subject)
			nm.Data = m.body
			for k, vs := range m.header {
				nm.Header[k] = vs
			}
			if m.msgID != "" {
				nm.Header.Set(jetstream.MsgIDHeader, m.msgID)
			}
			if _, err := js.PublishMsgAsync(nm); err != nil {
				t.Fatalf("publish: %v", err)
			}
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(60 * time.Second):
			t.Fatal("publish acks did not arrive")
		}
	}
}

// genStream generates n messages over a small population of entities, with
// versions out of order, duplicates, deletions and ~1% invalid messages.
func genStream(t testing.TB, rng *rand.Rand, n int) []wireMsg {
	t.Helper()
	consumers := make([]string, max(n/40, 4))
	for i := range consumers {
		consumers[i] = uuidFrom(rng)
	}
	contacts := make([]string, max(n/80, 2))
	for i := range contacts {
		contacts[i] = uuidFrom(rng)
	}
	signers := make([]string, 5)
	for i := range signers {
		signers[i] = uuidFrom(rng)
	}
	ver := func() uint64 { return uint64(rng.IntN(n/10+5) + 1) }
	msgs := make([]wireMsg, 0, n)
	for len(msgs) < n {
		c := consumers[rng.IntN(len(consumers))]
		var e events.Event
		switch r := rng.IntN(100); {
		case r < 1:
			msgs = append(msgs, invalidMsg(rng, c))
			continue
		case r < 20:
			e.Data = events.Consumer{ConsumerID: c, BusinessID: testBiz, FirstName: fmt.Sprintf("C%d", rng.IntN(1000)), LastName: "L"}
		case r < 23:
			e.Data = events.ConsumerDeleted{ConsumerID: c}
		case r < 33:
			e.Data = events.BusinessContact{ContactID: contacts[rng.IntN(len(contacts))], BusinessID: testBiz, FirstName: fmt.Sprintf("K%d", rng.IntN(1000)), LastName: "L"}
		case r < 36:
			e.Data = events.BusinessContactDeleted{ContactID: contacts[rng.IntN(len(contacts))]}
		case r < 90:
			s := fullSigner(c, signers[rng.IntN(len(signers))], fmt.Sprintf("S%d", rng.IntN(1000)))
			if rng.IntN(3) == 0 {
				s.Address, s.Phone, s.SSN, s.DateOfBirth, s.MiddleName = nil, nil, "", "", ""
			}
			e.Data = s
		default:
			e.Data = events.SignerDeleted{ConsumerID: c, SignerID: signers[rng.IntN(len(signers))]}
		}
		e.EntityVersion = ver()
		e.ID = uuidFrom(rng)
		m := encodeMsg(t, e)
		msgs = append(msgs, m)
		if rng.IntN(50) == 0 { // a re-delivery: same event, new message id
			m2 := m
			m2.msgID = uuidFrom(rng)
			msgs = append(msgs, m2)
		}
	}
	return msgs[:n]
}

func uuidFrom(rng *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// invalidMsg returns one of a few kinds of invalid messages about consumer c.
func invalidMsg(rng *rand.Rand, c string) wireMsg {
	subj := events.SubjectPrefixConsumer + c
	switch rng.IntN(4) {
	case 0:
		return wireMsg{subject: subj, body: []byte("not json"), msgID: uuidFrom(rng)}
	case 1:
		return wireMsg{subject: subj, msgID: uuidFrom(rng), body: fmt.Appendf(nil,
			`{"specversion":"1.0","id":"x","source":"s","type":"persons.consumer.upserted.v1","entityversion":0,"data":{"consumer_id":%q,"business_id":"0b0b0b0b-0000-4000-8000-00000000b12b","first_name":"f","last_name":"l"}}`, c)}
	case 2:
		return wireMsg{subject: subj, msgID: uuidFrom(rng), body: fmt.Appendf(nil,
			`{"specversion":"1.0","id":"x","source":"s","type":"persons.consumer.upserted.v1","entityversion":3,"data":{"consumer_id":%q,"business_id":"0b0b0b0b-0000-4000-8000-00000000b12b","first_name":"f","last_name":"l"}}`, uuidFrom(rng))}
	default:
		sid := uuidFrom(rng)
		return wireMsg{subject: events.SubjectPrefixSigner + c + "." + sid, msgID: uuidFrom(rng), body: fmt.Appendf(nil,
			`{"specversion":"1.0","id":"x","source":"s","type":"persons.authorized_signer.upserted.v1","entityversion":3,"data":{"consumer_id":%q,"signer_id":%q,"first_name":"f","last_name":"l","hipaa_authorized":true,"account_access":"ALL","status":"ACTIVE","type":"PARENT"}}`, c, sid)}
	}
}

// refState is the expected state of one entity.
type refState struct {
	Version uint64
	Deleted bool
	Data    any // events.Consumer/BusinessContact/Signer with ids cleared (as stored)
}

// reference is an independent in-memory model of docs/events.md,
// keyed like the store ("c"+id, "b"+id, "s"+cid+"."+sid) so that the two can
// be compared entity by entity.
func reference(msgs []wireMsg) (state map[string]refState, applied, skipped, dead int) {
	state = map[string]refState{}
	seenIDs := map[string]bool{} // JetStream dedup by Nats-Msg-Id
	for _, m := range msgs {
		if seenIDs[m.msgID] {
			continue
		}
		seenIDs[m.msgID] = true
		if !m.valid {
			dead++
			continue
		}
		e := m.ev
		var key string
		switch d := e.Data.(type) {
		case events.Consumer:
			key = "c" + d.ConsumerID
		case events.ConsumerDeleted:
			key = "c" + d.ConsumerID
		case events.BusinessContact:
			key = "b" + d.ContactID
		case events.BusinessContactDeleted:
			key = "b" + d.ContactID
		case events.Signer:
			key = "s" + d.ConsumerID + "." + d.SignerID
		case events.SignerDeleted:
			key = "s" + d.ConsumerID + "." + d.SignerID
		}
		if e.EntityVersion <= state[key].Version {
			skipped++
			continue
		}
		applied++
		switch d := e.Data.(type) {
		case events.Consumer:
			state[key] = refState{Version: e.EntityVersion, Data: events.Person{BusinessID: d.BusinessID, FirstName: d.FirstName, MiddleName: d.MiddleName, LastName: d.LastName}}
		case events.BusinessContact:
			state[key] = refState{Version: e.EntityVersion, Data: events.Person{BusinessID: d.BusinessID, FirstName: d.FirstName, MiddleName: d.MiddleName, LastName: d.LastName}}
		case events.Signer:
			d.ConsumerID, d.SignerID = "", ""
			state[key] = refState{Version: e.EntityVersion, Data: d}
		case events.ConsumerDeleted:
			prefix := "s" + d.ConsumerID + "."
			for k, v := range state {
				if len(k) > len(prefix) && k[:len(prefix)] == prefix && !v.Deleted {
					state[k] = refState{Version: v.Version, Deleted: true}
				}
			}
			state[key] = refState{Version: e.EntityVersion, Deleted: true}
		default:
			state[key] = refState{Version: e.EntityVersion, Deleted: true}
		}
	}
	return state, applied, skipped, dead
}

// dump reads every entity of the store in the reference model's shape,
// after checking that its signer sets hold what its signer records do.
func dump(t testing.TB, s *Store) map[string]refState {
	t.Helper()
	checkSignerSets(t, s)
	out := map[string]refState{}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := string(it.Item().Key())
			if k[0] == tagMeta || k[0] == tagSignerSet || k[0] == tagDeletion {
				continue // not entities: signer sets are checked by checkSignerSets, deletions by deletions_test.go
			}
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			h, rest, err := decodeHeader(v)
			if err != nil {
				return err
			}
			st := refState{Version: h.version, Deleted: h.deleted}
			if !h.deleted {
				if k[0] == tagSigner {
					st.Data, err = decodeSigner(rest)
				} else {
					st.Data, err = decodePerson(rest)
				}
				if err != nil {
					return err
				}
			}
			out[k] = st
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compareState reports every entity whose stored state differs from want.
func compareState(t testing.TB, got, want map[string]refState) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	bad := 0
	for _, k := range keys {
		if !reflect.DeepEqual(got[k], want[k]) {
			if bad++; bad <= 10 {
				t.Errorf("entity %s:\n got  %+v\n want %+v", k, got[k], want[k])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d entities differ", bad, len(keys))
	}
}

// runProjector runs p in the background; the returned stop cancels it and
// returns Run's result.
func runProjector(t testing.TB, p *Projector) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- p.Run(ctx) }()
	var once bool
	var res error
	stop = func() error {
		if !once {
			once = true
			cancel()
			select {
			case res = <-errc:
			case <-time.After(30 * time.Second):
				t.Error("Run did not return after cancel")
			}
		}
		return res
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// waitApplied waits until the projector's checkpoint reaches seq and,
// at the stream's end, until the signer sets a rebuild deferred are made
// (finishRebuild): the store is then whole, as its checks expect.
func waitApplied(t testing.TB, p *Projector, seq uint64, timeout time.Duration) {
	t.Helper()
	testkit.WaitFor(t, timeout, func() error {
		pr := p.Progress()
		if pr.AppliedSeq < seq {
			return fmt.Errorf("applied seq %d, want %d", pr.AppliedSeq, seq)
		}
		if pr.AppliedSeq >= pr.StreamLastSeq && p.store.setsDeferred.Load() {
			return fmt.Errorf("applied seq %d, the signer sets not made yet", pr.AppliedSeq)
		}
		return nil
	})
}

func streamLastSeq(t testing.TB, js jetstream.JetStream) uint64 {
	t.Helper()
	s, err := js.Stream(t.Context(), "PERSONS")
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().State.LastSeq
}

// testBiz is the business id of the test events.
const testBiz = "0b0b0b0b-0000-4000-8000-00000000b12b"

// badgerIterOpts returns iterator options over prefix, values prefetched.
func badgerIterOpts(prefix []byte) badger.IteratorOptions {
	return badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 16, Prefix: prefix}
}

// Checkpoint returns the stream sequence of the last processed event (applied,
// skipped or dead-lettered), 0 if none.
func (s *Store) Checkpoint() (uint64, error) {
	seq, _, err := s.checkpoint()
	return seq, err
}

// checkMismatch runs p until it fails and checks that it refused its
// stream: ErrStreamMismatch naming each of want, CaughtUp never closed, and
// s's checkpoint still before.
func checkMismatch(t *testing.T, p *Projector, s *Store, before uint64, want ...string) {
	t.Helper()
	err := runUntilError(t, p)
	if !errors.Is(err, ErrStreamMismatch) {
		t.Fatalf("Run err = %v, want ErrStreamMismatch", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	select {
	case <-p.CaughtUp():
		t.Error("CaughtUp closed on a mismatched stream")
	default:
	}
	if after, err := s.Checkpoint(); err != nil || after != before {
		t.Errorf("checkpoint = %d, %v; want %d unchanged", after, err, before)
	}
}
