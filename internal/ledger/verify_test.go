package ledger

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// fill stores n disclosures of personA through l, one at a time (so one
// message each).
func fill(t *testing.T, l *Ledger, n int) {
	t.Helper()
	fillAs(t, l, "req", n)
}

// fillAs is fill with request ids prefix-0, prefix-1...
func fillAs(t *testing.T, l *Ledger, prefix string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := l.Disclose(t.Context(), disclosure(fmt.Sprintf("%s-%d", prefix, i), personA)); err != nil {
			t.Fatalf("Disclose: %v", err)
		}
	}
}

// rewrite deletes the messages at stream sequences seqs and publishes
// them again in that order, after change (when not nil) has changed each.
func rewrite(t *testing.T, js jetstream.JetStream, s jetstream.Stream, change func(string) string, seqs ...uint64) {
	t.Helper()
	ctx := t.Context()
	var msgs []*jetstream.RawStreamMsg
	for _, seq := range seqs {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
		if err := s.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range msgs {
		data := string(m.Data)
		if change != nil {
			data = change(data)
		}
		if _, err := js.Publish(ctx, m.Subject, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestVerify(t *testing.T) {
	ctx := t.Context()
	otherPurpose := func(s string) string { return strings.Replace(s, `"purpose":"TREAT"`, `"purpose":"OTHER"`, 1) }
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, js jetstream.JetStream, s jetstream.Stream)
		want   []string // each the substring of one problem
	}{
		{"intact", func(*testing.T, jetstream.JetStream, jetstream.Stream) {}, nil},
		{"message deleted", func(t *testing.T, _ jetstream.JetStream, s jetstream.Stream) {
			if err := s.DeleteMsg(ctx, 3); err != nil {
				t.Fatal(err)
			}
		}, []string{
			"stream sequence 3: deleted",
			"chain r1, message 4 (stream sequence 4): was written after stream sequence 3, but follows stream sequence 2",
			"chain r1, message 4 (stream sequence 4): message 3 missing",
		}},
		{"last message deleted", func(t *testing.T, _ jetstream.JetStream, s jetstream.Stream) {
			if err := s.DeleteMsg(ctx, 5); err != nil {
				t.Fatal(err)
			}
		}, []string{"stream sequence 5: deleted"}},
		{"message altered", func(t *testing.T, js jetstream.JetStream, s jetstream.Stream) {
			rewrite(t, js, s, otherPurpose, 2)
		}, []string{
			"stream sequence 2: deleted",
			"chain r1, message 3 (stream sequence 3): was written after stream sequence 2, but follows stream sequence 1",
			"chain r1, message 3 (stream sequence 3): message 2 missing",
			"chain r1, message 2 (stream sequence 6): out of order: after message 5",
		}},
		{"last message altered", func(t *testing.T, js jetstream.JetStream, s jetstream.Stream) {
			rewrite(t, js, s, otherPurpose, 5)
		}, []string{"stream sequence 5: deleted"}},
		{"messages reordered", func(t *testing.T, js jetstream.JetStream, s jetstream.Stream) {
			rewrite(t, js, s, nil, 4, 3)
		}, []string{
			"stream sequences 3-4: deleted",
			"chain r1, message 5 (stream sequence 5): was written after stream sequence 4, but follows stream sequence 2",
			"chain r1, message 5 (stream sequence 5): messages 3-4 missing",
			"chain r1, message 4 (stream sequence 6): out of order: after message 5",
			"chain r1, message 3 (stream sequence 7): out of order: after message 5",
		}},
		{"message forged at the tail", func(t *testing.T, js jetstream.JetStream, _ jetstream.Stream) {
			forged := `{"v":2,"replica":"r1","seq":6,"prev":"00","records":[{"time":"2026-01-01T00:00:00Z","request_id":"x","operation":"getPerson","person_id":"` + personA + `","persons":1,"replica":"r1","read_model_sequence":0}]}`
			if _, err := js.Publish(ctx, ReplicaSubject("r1"), []byte(forged)); err != nil {
				t.Fatal(err)
			}
		}, []string{"chain r1, message 6 (stream sequence 6): does not hold the hash of the message before it (stream sequence 5)"}},
		{"not a message", func(t *testing.T, js jetstream.JetStream, _ jetstream.Stream) {
			if _, err := js.Publish(ctx, ReplicaSubject("r1"), []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
		}, []string{"chain r1, stream sequence 6: not an audit message"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, js := runNATS(t)
			// Each message a batch of its own (ended as soon as it is
			// stored), so that each names the stream sequence it follows.
			fill(t, newLedger(t, nc, Config{BatchMaxAge: time.Nanosecond}), 5)
			s, err := js.Stream(ctx, DefaultStream)
			if err != nil {
				t.Fatal(err)
			}
			tc.tamper(t, js, s)
			rep, err := Verify(ctx, js, DefaultStream)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if len(rep.Problems) != len(tc.want) {
				t.Fatalf("problems = %q\nwant %d: %q", rep.Problems, len(tc.want), tc.want)
			}
			for _, w := range tc.want {
				found := false
				for _, p := range rep.Problems {
					found = found || strings.Contains(p, w)
				}
				if !found {
					t.Errorf("problems = %q\nwant one containing %q", rep.Problems, w)
				}
			}
		})
	}
}

func TestVerifyChainsPerReplica(t *testing.T) {
	nc, js := runNATS(t)
	fill(t, newLedger(t, nc, Config{Replica: "a"}), 3)
	fill(t, newLedger(t, nc, Config{Replica: "b"}), 2)
	rep, err := Verify(t.Context(), js, DefaultStream)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !rep.OK() || len(rep.Chains) != 2 || rep.Chains[0].Records != 3 || rep.Chains[1].Records != 2 {
		t.Errorf("Verify = %+v, want chains of 3 (a) and 2 (b) records, no problem", rep)
	}
}

// TestLedgerResumesItsChain: a replica's chain runs on across restarts,
// from the last message stored.
func TestLedgerResumesItsChain(t *testing.T) {
	nc, js := runNATS(t)
	for range 3 {
		l := newLedger(t, nc, Config{Replica: "a"})
		fill(t, l, 2)
		if err := l.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Verify(t.Context(), js, DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || len(rep.Chains) != 1 || rep.Chains[0].First != 1 || rep.Chains[0].Last != 6 {
		t.Errorf("Verify = %+v, want one chain of messages 1-6, no problem", rep)
	}
}

// TestVerifyAndAccountingReadFormat1: the records a ledger wrote before
// format 2, one per message on the person's subject, still verify and
// count.
func TestVerifyAndAccountingReadFormat1(t *testing.T) {
	nc, js := runNATS(t)
	ctx := t.Context()
	if err := EnsureStream(ctx, js, DefaultStream); err != nil {
		t.Fatal(err)
	}
	prev := ""
	for i := range 3 {
		r := Record{Time: time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC), RequestID: fmt.Sprint("old-", i), Operation: "getAuthorizedSigners",
			PersonID: personB, Persons: 1, Replica: "r0", Chain: "c0", Seq: uint64(i + 1), Prev: prev}
		data := appendRecord(nil, &r)
		prev = hashOf(data)
		if _, err := js.Publish(ctx, LegacySubjectPrefix+personB, data); err != nil {
			t.Fatal(err)
		}
	}
	fill(t, newLedger(t, nc, Config{}), 2)
	rep, err := Verify(ctx, js, DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Records != 5 || len(rep.Chains) != 2 {
		t.Errorf("Verify = %+v, want 5 records in 2 chains, no problem", rep)
	}
	recs, err := ScanPerson(ctx, js, DefaultStream, personB, time.Time{}, time.Time{})
	if err != nil || len(recs) != 3 || recs[0].RequestID != "old-2" {
		t.Errorf("Accounting = %+v, %v; want the 3 format 1 records, newest first", recs, err)
	}
}
