package accountingtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
)

// A ledger of the same answers written in format 2 (as Ledgers wrote it
// before format 3) or in format 3, or half and half: what holds every
// reader to reading the two alike.

// MixedPersons are the persons of MixedAnswers: Persons and two more, so
// that an answer lists up to five.
var MixedPersons = append(append([]string(nil), Persons...),
	"44444444-4444-4444-8444-444444444444", "55555555-5555-4555-8555-555555555555")

// MixedAnswer is one answer of MixedAnswers: its disclosure, when it was
// recorded and the read model's position then.
type MixedAnswer struct {
	events.Disclosure
	At       time.Time
	Position uint64
}

// MixedAnswers returns n answers a minute apart from 2026-11-01, each of
// one to five persons (in turn) of MixedPersons, starting at a different
// one each time, each with its SSN mode and date of birth, to a client,
// subject and purpose in turn; one in seven a search of the accounting
// (one person, nothing disclosed), and one in eleven with tenants.
func MixedAnswers(n int) []MixedAnswer {
	modes := []string{"LAST4", "FULL", "", "MASKED"}
	out := make([]MixedAnswer, n)
	for i := range out {
		d := events.Disclosure{RequestID: fmt.Sprintf("req-%03d", i), Subject: fmt.Sprintf("clerk-%d", i%4),
			Client: Clients[i%3], Operation: "getAuthorizedSigners", Purpose: Purposes[i%4]}
		for j := range 1 + i%5 {
			d.Persons = append(d.Persons, events.DisclosedPerson{ID: MixedPersons[(i+j)%len(MixedPersons)],
				SSNMode: modes[(i+j)%len(modes)], DOB: (i+j)%3 != 0})
		}
		switch {
		case i%7 == 6:
			d.Operation = accounting.OperationSearch
			d.Persons = []events.DisclosedPerson{{ID: d.Persons[0].ID}}
		case i%11 == 10:
			d.Tenants = []string{"b1", "b2"}
		}
		out[i] = MixedAnswer{Disclosure: d, At: time.Date(2026, 11, 1, 0, i, 0, 0, time.UTC), Position: uint64(100 + i)} //nolint:gosec // G115: i is not negative
	}
	return out
}

// WriteFormat2 stores answers on replica's chain in format 2, one record
// per person, as a Ledger wrote them before format 3: perMessage answers
// a message (json.Marshal of a ledger.Message, what that writer wrote),
// the chain going on from the last message on its subject, each message
// expecting the one before it there.
func WriteFormat2(t *testing.T, js jetstream.JetStream, replica string, answers []MixedAnswer, perMessage int) {
	t.Helper()
	ctx := t.Context()
	if err := ledger.EnsureStream(ctx, js, ledger.DefaultStream); err != nil {
		t.Fatal(err)
	}
	subject := ledger.ReplicaSubject(replica)
	seq, prev, last := chainHead(t, js, subject)
	for len(answers) > 0 {
		k := min(perMessage, len(answers))
		seq++
		m := ledger.Message{Version: ledger.Format2, Replica: replica, Seq: seq, Prev: prev}
		for _, a := range answers[:k] {
			for _, p := range a.Persons {
				m.Records = append(m.Records, ledger.Record{Time: a.At, RequestID: a.RequestID, Subject: a.Subject,
					Client: a.Client, Tenants: a.Tenants, Operation: a.Operation, PersonID: p.ID, SSNMode: p.SSNMode,
					DOBDisclosed: p.DOB, Purpose: a.Purpose, Requested: a.Requested, Persons: len(a.Persons),
					Replica: replica, ReadModelSeq: a.Position})
			}
		}
		answers = answers[k:]
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		ack, err := js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: data,
			Header: nats.Header{jetstream.ExpectedLastSubjSeqHeader: []string{fmt.Sprint(last)}}})
		if err != nil {
			t.Fatal(err)
		}
		prev, last = hashOf(data), ack.Sequence
	}
}

// chainHead returns the seq of the last message on subject, its hash and
// its stream sequence (zeros when there is none).
func chainHead(t *testing.T, js jetstream.JetStream, subject string) (seq uint64, hash string, streamSeq uint64) {
	t.Helper()
	s, err := js.Stream(t.Context(), ledger.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := s.GetLastMsgForSubject(t.Context(), subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, "", 0
	}
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Seq uint64 `json:"seq"`
	}
	if err := json.Unmarshal(raw.Data, &m); err != nil {
		t.Fatal(err)
	}
	return m.Seq, hashOf(raw.Data), raw.Sequence
}

// WriteFormat3 stores answers through a Ledger of replica (format 3),
// which goes on with the chain the subject holds: best-effort, so that
// the answers queued while a message is stored share the next one, and at
// most maxPersons persons a message, so that an answer of more is split
// over messages. It returns once all are stored.
func WriteFormat3(t *testing.T, nc *nats.Conn, replica string, answers []MixedAnswer, maxPersons int) {
	t.Helper()
	i := 0
	l, err := ledger.New(nc, ledger.Config{Mode: ledger.BestEffort, Replica: replica, MaxMessageRecords: maxPersons,
		Now: func() time.Time { return answers[i].At }, Position: func() uint64 { return answers[i].Position }})
	if err != nil {
		t.Fatal(err)
	}
	for ; i < len(answers); i++ {
		if err := l.Disclose(t.Context(), answers[i].Disclosure); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// hashOf returns the hex SHA-256 of data: a message's prev holds its
// predecessor's.
func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
