// The demo data set of "lookupd dev" and "lookupd demo":
// a few businesses, twenty consumers, business contacts and signers of
// every status, type and access level, with a little history, built
// through the real event contract with deterministic ids.

package dev

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
)

// namespace derives the deterministic ids of the demo data set, so
// that the example requests dev prints are the same on every run.
var namespace = uuid.MustParse("6f1c9a52-3f4e-4b8a-9d2e-0c7a51e3b7d4")

func DemoID(kind string, i int) string {
	return uuid.NewSHA1(namespace, fmt.Appendf(nil, "%s-%d", kind, i)).String()
}

// DemoSource is the CloudEvents source of the demo events.
const DemoSource = "urn:lookupd:dev"

// DemoData is the demo data set: a few businesses, twenty consumers, some
// business contacts and signers of every status, type and access level,
// with and without each optional field, plus a little history (updates
// and deletions) so that versions and 404s can be seen.
type DemoData struct {
	Businesses []string
	Events     []events.Event
	// Examples for the printed requests.
	Consumer        string // a consumer with many signers
	BusinessContact string // a business contact
	DeletedConsumer string // a deleted consumer (404)
	Signer          string // a signer of Consumer with an SSN and a date of birth
}

var (
	firstNames  = []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Ken", "Radia", "Dennis", "Frances", "John", "Hedy", "Tim", "Katherine", "Claude", "Sophie", "Linus", "Anita", "Niklaus"}
	middleNames = []string{"Marie", "Lee", "Jo", "Ann", "Ray", "Kay"}
	lastNames   = []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Thompson", "Perlman", "Ritchie", "Allen", "McCarthy", "Lamarr", "Berners-Lee", "Johnson", "Shannon", "Wilson", "Torvalds", "Borg", "Wirth"}
	cities      = []struct{ city, state, zip string }{{"Springfield", "IL", "62701"}, {"Portland", "OR", "97201"}, {"Austin", "TX", "73301"}, {"Madison", "WI", "53703"}}
	statuses    = []events.SignerStatus{events.SignerStatusActive, events.SignerStatusInactive, events.SignerStatusPending, events.SignerStatusArchived}
	signerTypes = []events.SignerType{events.SignerTypeAuthorizedSigner, events.SignerTypePowerOfAttorney, events.SignerTypeAuthorizedRepresentative, events.SignerTypeGuardian, events.SignerTypeParent, events.SignerTypeConservator}
	accesses    = []events.AccountAccess{events.AccountAccessNone, events.AccountAccessPHI, events.AccountAccessPHIAndAccountUpdates, events.AccountAccessUnspecified}
)

// NewDemoData builds the demo data set. Event ids are deterministic too,
// so a re-publish inside the stream's duplicate window is dropped.
func NewDemoData() (*DemoData, error) {
	d := &DemoData{}
	for i := range 3 {
		d.Businesses = append(d.Businesses, DemoID("business", i))
	}
	var err error // the first error of add; add does nothing after one
	add := func(version uint64, data any) {
		if err != nil {
			return
		}
		var ev events.Event
		if ev, err = events.NewEvent(DemoSource, version, data); err != nil {
			return
		}
		ent := ev.Entity()
		ev.ID = uuid.NewSHA1(namespace, fmt.Appendf(nil, "event-%s-%s-%d", ent.Kind, ent.ID, version)).String()
		ev.Time = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(len(d.Events)) * time.Minute)
		d.Events = append(d.Events, ev)
	}
	const consumers = 20
	for i := range consumers {
		c := events.Consumer{
			ConsumerID: DemoID("consumer", i),
			BusinessID: d.Businesses[i%len(d.Businesses)],
			FirstName:  firstNames[i%len(firstNames)],
			LastName:   lastNames[(i*7)%len(lastNames)],
		}
		if i%2 == 0 {
			c.MiddleName = middleNames[i%len(middleNames)]
		}
		add(1, c)
	}
	// An update: consumer 1 changed their last name.
	c1 := events.Consumer{ConsumerID: DemoID("consumer", 1), BusinessID: d.Businesses[1], FirstName: firstNames[1], LastName: "Hopper-Murray"}
	add(2, c1)
	for i := range 6 {
		bc := events.BusinessContact{
			ContactID:  DemoID("contact", i),
			BusinessID: d.Businesses[i%len(d.Businesses)],
			FirstName:  firstNames[(i+5)%len(firstNames)],
			LastName:   lastNames[(i+11)%len(lastNames)],
		}
		if i%2 == 1 {
			bc.MiddleName = middleNames[(i+2)%len(middleNames)]
		}
		add(1, bc)
	}
	// Signers: eight for consumer 0 (every status, type and access level),
	// and one to three for each of consumers 1 to 12.
	k := 0
	for ci := range 13 {
		n := 1 + ci%3
		if ci == 0 {
			n = 8
		}
		for range n {
			add(1, DemoSigner(DemoID("consumer", ci), k))
			k++
		}
	}
	// History: a signer of consumer 0 becomes active again (version 2), a
	// signer of consumer 2 is deleted, contact 5 is deleted, and consumer
	// 19 (no signers) is deleted.
	s := DemoSigner(DemoID("consumer", 0), 1)
	s.Status = events.SignerStatusActive
	add(2, s)
	add(2, events.SignerDeleted{SignerID: DemoID("signer", 12), ConsumerID: DemoID("consumer", 2)})
	add(2, events.BusinessContactDeleted{ContactID: DemoID("contact", 5)})
	add(2, events.ConsumerDeleted{ConsumerID: DemoID("consumer", 19)})
	if err != nil {
		return nil, err
	}
	d.Consumer = DemoID("consumer", 0)
	d.BusinessContact = DemoID("contact", 0)
	d.DeletedConsumer = DemoID("consumer", 19)
	d.Signer = DemoID("signer", 0) // Signer(Consumer, 0): an SSN and a date of birth
	return d, nil
}

// DemoSigner returns the k-th demo signer, of consumer. The optional fields
// vary with k so that every combination shows up.
func DemoSigner(consumer string, k int) events.Signer {
	s := events.Signer{
		SignerID:        DemoID("signer", k),
		ConsumerID:      consumer,
		FirstName:       firstNames[(k*3+1)%len(firstNames)],
		LastName:        lastNames[(k*7+2)%len(lastNames)],
		HIPAAAuthorized: k%3 == 0,
		Status:          statuses[k%len(statuses)],
		Type:            signerTypes[k%len(signerTypes)],
		AccountAccess:   accesses[(k+k/4)%len(accesses)],
	}
	if k%2 == 0 {
		s.MiddleName = middleNames[k%len(middleNames)]
	}
	if k%3 != 2 {
		c := cities[k%len(cities)]
		s.Address = &events.Address{Line1: fmt.Sprintf("%d Main Street", 100+k), City: c.city, State: c.state, ZipCode: c.zip, Country: "US"}
		if k%2 == 1 {
			s.Address.Line2 = fmt.Sprintf("Apt %d", k+1)
		}
	}
	if k%4 != 3 {
		s.Phone = &events.Phone{CountryCode: "+1", AreaCode: fmt.Sprintf("%d", 201+k), Number: fmt.Sprintf("555%04d", 100+k*17)}
		if k%5 == 0 {
			s.Phone.Extension = fmt.Sprintf("%d", 10+k)
		}
	}
	if k%3 != 1 {
		// Both written forms; Decode normalises them to nine digits.
		area, group, serial := 101+k*7, 10+k%80, 1000+k*37
		if k%2 == 0 {
			s.SSN = fmt.Sprintf("%03d-%02d-%04d", area, group, serial)
		} else {
			s.SSN = fmt.Sprintf("%03d%02d%04d", area, group, serial)
		}
	}
	if k%4 != 2 {
		s.DateOfBirth = fmt.Sprintf("%04d-%02d-%02d", 1950+k%50, 1+k%12, 1+k%28)
	}
	return s
}

// PublishDemo publishes the demo events through p, unless the stream
// already holds messages (a dev data directory used again). It returns the
// number of events published.
func PublishDemo(ctx context.Context, js jetstream.JetStream, stream string, p *events.Publisher, d *DemoData) (int, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", stream, err)
	}
	if s.CachedInfo().State.Msgs > 0 {
		return 0, nil
	}
	for _, ev := range d.Events {
		if _, err := p.Publish(ctx, ev); err != nil {
			return 0, fmt.Errorf("publish demo event %s: %w", ev.Type, err)
		}
	}
	return len(d.Events), nil
}

// PublishAllDemo publishes every demo event through p to a stream whose last
// sequence was before, and returns how many were new: the stream drops a
// duplicate within its window and answers with the sequence of the
// original, at or before before.
func PublishAllDemo(ctx context.Context, p *events.Publisher, before uint64, d *DemoData) (added int, err error) {
	for _, ev := range d.Events {
		seq, err := p.Publish(ctx, ev)
		if err != nil {
			return added, fmt.Errorf("publish demo event %s: %w", ev.ID, err)
		}
		if seq > before {
			added++
		}
	}
	return added, nil
}
