package audittest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/ledger"
)

// Ledger is what an audit stream holds: its records by request id, and
// what ledger.Verify reports of it.
type Ledger struct {
	ByRequest map[string][]ledger.Record
	Records   int
	Report    ledger.Report
}

// ReadLedger reads every record of the audit stream (as it holds them
// when the call starts) and verifies the whole stream.
func ReadLedger(ctx context.Context, js jetstream.JetStream, stream string) (Ledger, error) {
	l := Ledger{ByRequest: map[string][]ledger.Record{}}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return l, fmt.Errorf("audit stream %q: %w", stream, err)
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return l, err
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return l, err
	}
	for left := info.NumPending; left > 0; {
		batch, err := cons.Fetch(int(min(left, 500)), jetstream.FetchContext(ctx))
		if err != nil {
			return l, err
		}
		for msg := range batch.Messages() {
			meta, err := msg.Metadata()
			if err != nil {
				return l, err
			}
			left = meta.NumPending
			recs, err := ledger.RecordsOf(msg.Subject(), msg.Data())
			if err != nil {
				return l, fmt.Errorf("stream sequence %d: %w", meta.Sequence.Stream, err)
			}
			for _, r := range recs {
				l.ByRequest[r.RequestID] = append(l.ByRequest[r.RequestID], r)
				l.Records++
			}
		}
		if err := batch.Error(); err != nil {
			return l, err
		}
	}
	l.Report, err = ledger.Verify(ctx, js, stream)
	return l, err
}

// Check fails t with each of l's Problems; it returns the number of
// answers of answers that were sent.
func (l Ledger) Check(t testing.TB, answers []Answer, persons []string) int {
	t.Helper()
	problems := l.Problems(answers, persons)
	for i, p := range problems {
		if i == 10 {
			t.Errorf("... %d problems in all", len(problems))
			break
		}
		t.Error(p)
	}
	return len(Released(answers))
}

// Problems says what is wrong with l given answers: an answer sent
// (status 200) without exactly one record per person of persons stored
// (or with a record of another person), a record stored twice, and what
// Verify found.
func (l Ledger) Problems(answers []Answer, persons []string) []string {
	var problems []string
	for _, id := range slices.Sorted(maps.Keys(l.ByRequest)) {
		seen := map[string]bool{}
		for _, r := range l.ByRequest[id] {
			if seen[r.PersonID] {
				problems = append(problems, fmt.Sprintf("request %s: the record of person %s is stored twice", id, r.PersonID))
			}
			seen[r.PersonID] = true
		}
	}
	want := slices.Sorted(slices.Values(persons))
	for _, a := range answers {
		if !a.Released() {
			continue
		}
		var got []string
		for _, r := range l.ByRequest[a.ID] {
			got = append(got, r.PersonID)
		}
		slices.Sort(got)
		if !slices.Equal(slices.Compact(got), want) {
			problems = append(problems, fmt.Sprintf("answer %s sent (status 200) with the records of %v stored, want those of %v", a.ID, got, want))
		}
	}
	for _, p := range l.Report.Problems {
		problems = append(problems, "audit verify: "+p)
	}
	return problems
}
