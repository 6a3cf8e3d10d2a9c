package ledger

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// publishFormat2 stores n format 2 messages on replica's chain, as a
// Ledger wrote them before format 3, each of one answer of two persons
// (request ids old-0, old-1...), the first at message 1, each expecting
// the one before on the subject.
func publishFormat2(t *testing.T, js jetstream.JetStream, replica string, n int) {
	t.Helper()
	ctx := t.Context()
	if err := EnsureStream(ctx, js, DefaultStream); err != nil {
		t.Fatal(err)
	}
	prev, last := "", uint64(0)
	for i := range n {
		p := &pending{d: disclosure(fmt.Sprint("old-", i), personA, personB), time: time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC), pos: 7}
		o := outbox2{maxRecords: 256, maxBytes: 56 << 10}
		o.start(replica, uint64(i+1), prev)
		var r Record
		for j := range p.records() {
			p.record(j, replica, &r)
			o.add(&r)
		}
		data := o.finish()
		msg := &nats.Msg{Subject: ReplicaSubject(replica), Data: data, Header: nats.Header{expectedLastSubjSeq: []string{uitoa(last)}}}
		ack, err := js.PublishMsg(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		prev, last = hashOf(data), ack.Sequence
	}
}

// TestChainGoesOnInFormat3: a replica upgraded to format 3 goes on with
// the chain it wrote in format 2; verify passes on the whole chain, and a
// scan reads one record per person of either format, each answer's
// persons in its order, with a reference of its own.
func TestChainGoesOnInFormat3(t *testing.T) {
	nc, js := runNATS(t)
	publishFormat2(t, js, "r1", 3)
	l := newLedger(t, nc, Config{MaxMessageRecords: 3, BatchMaxAge: time.Nanosecond})
	for i := range 3 {
		if err := l.Disclose(t.Context(), disclosure(fmt.Sprint("new-", i), personB, personA, personB, personA, personB)); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Verify(t.Context(), js, DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	// 3 format 2 messages, then each answer of five in two messages (3 + 2).
	if !rep.OK() || len(rep.Chains) != 1 || rep.Chains[0].Last != 9 || rep.Records != 3*2+3*5 {
		t.Fatalf("Verify = %+v, want one chain of messages 1-9, 21 records, no problem", rep)
	}
	byRequest, refs := map[string][]string{}, map[string]bool{}
	formats := map[uint64]int{}
	err = readAll(t.Context(), js, DefaultStream, func(m stored) error {
		msg, err := decodeMessage(m.data)
		if err != nil {
			return err
		}
		formats[msg.Seq] = msg.Version
		for _, r := range recordsOf(m.subject, msg) {
			byRequest[r.RequestID] = append(byRequest[r.RequestID], r.PersonID)
			ref := fmt.Sprintf("%s-%d-%d", r.Chain, r.Seq, r.Index)
			if refs[ref] {
				t.Errorf("reference %s given twice", ref)
			}
			refs[ref] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if got := byRequest[fmt.Sprint("old-", i)]; !slices.Equal(got, []string{personA, personB}) {
			t.Errorf("old-%d: persons %v", i, got)
		}
		if got := byRequest[fmt.Sprint("new-", i)]; !slices.Equal(got, []string{personB, personA, personB, personA, personB}) {
			t.Errorf("new-%d: persons %v", i, got)
		}
	}
	if formats[3] != Format2 || formats[4] != FormatVersion || !refs["r1-3-2"] || !refs["r1-4-3"] || !refs["r1-5-2"] || refs["r1-5-3"] {
		t.Errorf("formats by message %v, references %v", formats, refs)
	}
	// lookupd audit --person without the accounting service.
	recs, err := ScanPerson(t.Context(), js, DefaultStream, personA, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s %s-%d-%d %s %v %d", r.RequestID, r.Chain, r.Seq, r.Index, r.SSNMode, r.DOBDisclosed, r.Persons))
	}
	// The new answers (now) are newer than the old (2026-01-01); each
	// lists personA second and fourth, so in message 4 (persons 1-3) and 5
	// (persons 4-5) of its two.
	if len(got) != 3*2+3 || !strings.HasPrefix(got[0], "new-") || got[len(got)-1] != "old-0 r1-1-1 LAST4 true 2" ||
		!slices.Contains(got, "new-0 r1-4-2 LAST4 true 5") || !slices.Contains(got, "new-0 r1-5-1 LAST4 true 5") {
		t.Errorf("ScanPerson = %q", got)
	}
}

// TestVerifyFindsAFormat3RecordAltered: a format 3 record altered (a
// person's SSN mode, a person dropped from its list) breaks the chain
// where verify looks.
func TestVerifyFindsAFormat3RecordAltered(t *testing.T) {
	for name, change := range map[string]func(string) string{
		"ssn mode": func(s string) string { return strings.Replace(s, `"ssn_mode":"LAST4"`, `"ssn_mode":"FULL"`, 1) },
		"person dropped": func(s string) string {
			return strings.Replace(s, `,{"person_id":"`+personB+`","ssn_mode":"LAST4","dob_disclosed":true}`, "", 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			nc, js := runNATS(t)
			l := newLedger(t, nc, Config{BatchMaxAge: time.Nanosecond})
			for i := range 4 {
				if err := l.Disclose(t.Context(), disclosure(fmt.Sprint("req-", i), personA, personB)); err != nil {
					t.Fatal(err)
				}
			}
			s, err := js.Stream(t.Context(), DefaultStream)
			if err != nil {
				t.Fatal(err)
			}
			m, err := s.GetMsg(t.Context(), 2)
			if err != nil {
				t.Fatal(err)
			}
			if changed := change(string(m.Data)); changed == string(m.Data) || !strings.HasPrefix(changed, `{"v":3,`) {
				t.Fatalf("nothing to alter in %s", m.Data)
			}
			rewrite(t, js, s, change, 2)
			rep, err := Verify(t.Context(), js, DefaultStream)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"stream sequence 2: deleted", "chain r1, message 3 (stream sequence 3): message 2 missing",
				"chain r1, message 2 (stream sequence 5): out of order: after message 4"}
			for _, w := range want {
				if !slices.ContainsFunc(rep.Problems, func(p string) bool { return strings.Contains(p, w) }) {
					t.Errorf("problems = %q\nwant one containing %q", rep.Problems, w)
				}
			}
		})
	}
}
