package dev

import (
	"testing"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
)

func mustNew(t *testing.T) *DemoData {
	t.Helper()
	d, err := NewDemoData()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDemoData(t *testing.T) {
	d := mustNew(t)
	var (
		consumers, contacts                            = map[string]bool{}, map[string]bool{}
		statuses                                       = map[events.SignerStatus]bool{}
		types                                          = map[events.SignerType]bool{}
		access                                         = map[events.AccountAccess]bool{}
		mid, noMid, addr, noAddr, ph, noPh, ssn, noSSN int
		dob, noDOB, deletes                            int
	)
	ids := map[string]bool{}
	for _, ev := range d.Events {
		// Every demo event is valid under the v1 contract.
		body, err := events.Encode(ev)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		if _, err := events.Decode(ev.Subject(), body); err != nil {
			t.Errorf("demo event %s %s invalid: %v", ev.Type, ev.Subject(), err)
		}
		if ids[ev.ID] {
			t.Errorf("duplicate event id %s", ev.ID)
		}
		ids[ev.ID] = true
		switch x := ev.Data.(type) {
		case events.Consumer:
			consumers[x.ConsumerID] = true
		case events.BusinessContact:
			contacts[x.ContactID] = true
		case events.Signer:
			statuses[x.Status], types[x.Type], access[x.AccountAccess] = true, true, true
			count := func(has bool, yes, no *int) {
				if has {
					*yes++
				} else {
					*no++
				}
			}
			count(x.MiddleName != "", &mid, &noMid)
			count(x.Address != nil, &addr, &noAddr)
			count(x.Phone != nil, &ph, &noPh)
			count(x.SSN != "", &ssn, &noSSN)
			count(x.DateOfBirth != "", &dob, &noDOB)
		default:
			deletes++
		}
	}
	if len(consumers) != 20 || len(contacts) < 3 || len(d.Businesses) < 2 {
		t.Errorf("%d consumers, %d contacts, %d businesses; want 20, >=3, >=2", len(consumers), len(contacts), len(d.Businesses))
	}
	if len(statuses) != 4 || len(types) != 6 || len(access) != 4 {
		t.Errorf("signers cover %d statuses, %d types, %d access levels; want 4, 6, 4", len(statuses), len(types), len(access))
	}
	for name, n := range map[string]int{"middle name": mid, "no middle name": noMid, "address": addr, "no address": noAddr,
		"phone": ph, "no phone": noPh, "SSN": ssn, "no SSN": noSSN, "DOB": dob, "no DOB": noDOB, "deletions": deletes} {
		if n == 0 {
			t.Errorf("no signer (or event) with %s", name)
		}
	}
	again := mustNew(t)
	if again.Events[0].ID != d.Events[0].ID || again.Consumer != d.Consumer {
		t.Errorf("demo ids are not deterministic")
	}
}

// TestPublish: Publish fills an empty stream and leaves one that holds
// events alone; PublishAll publishes again and counts no event as new
// (the stream drops duplicates of the deterministic ids).
func TestPublish(t *testing.T) {
	_, js := testkit.StartNATS(t)
	testkit.PersonsStream(t, js)
	ctx := t.Context()
	d := mustNew(t)
	p := events.NewPublisher(js)
	for i, want := range []int{len(d.Events), 0} {
		n, err := PublishDemo(ctx, js, "PERSONS", p, d)
		if err != nil || n != want {
			t.Fatalf("Publish #%d = %d, %v; want %d", i+1, n, err, want)
		}
	}
	s, err := js.Stream(ctx, "PERSONS")
	if err != nil {
		t.Fatal(err)
	}
	last := s.CachedInfo().State.LastSeq
	if added, err := PublishAllDemo(ctx, p, last, d); err != nil || added != 0 {
		t.Errorf("PublishAll again = %d, %v; want 0 new", added, err)
	}
	if added, err := PublishAllDemo(ctx, p, 0, d); err != nil || added != len(d.Events) {
		t.Errorf("PublishAll over an empty stream's sequence = %d, %v; want %d", added, err, len(d.Events))
	}
}
