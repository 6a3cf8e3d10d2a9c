package loadtest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/lookup/persons/events"
)

// Population is the data set of a soak: consumers (people) and authorized
// signers, signer j under consumer j mod the number of consumers, as
// integration's mixed events are (a consumer and its full signer). It
// builds the events that create them and, after that, the events that
// update them, each with the next entity version.
//
// The ids are fixed once made and safe to read from any goroutine; Next
// is for one goroutine at a time (it counts versions).
type Population struct {
	consumers, signers []uuid.UUID
	business           string
	versions           []uint32 // consumers then signers: the last version published
	rng                *rand.Rand
}

// NewPopulation returns people consumers and signers signers with ids
// drawn from seed, none published yet. people must be positive when
// signers is.
func NewPopulation(people, signers int, seed uint64) *Population {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) //nolint:gosec // G404: test data, not secrets
	id := func() uuid.UUID {
		var u uuid.UUID
		binary.LittleEndian.PutUint64(u[:8], rng.Uint64())
		binary.LittleEndian.PutUint64(u[8:], rng.Uint64())
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
		return u
	}
	p := &Population{consumers: make([]uuid.UUID, people), signers: make([]uuid.UUID, signers),
		business: uuid.NewSHA1(uuid.NameSpaceOID, []byte("loadtest-soak")).String(),
		versions: make([]uint32, people+signers), rng: rng}
	for i := range p.consumers {
		p.consumers[i] = id()
	}
	for i := range p.signers {
		p.signers[i] = id()
	}
	return p
}

// People and Signers return how many consumers and signers p holds.
func (p *Population) People() int  { return len(p.consumers) }
func (p *Population) Signers() int { return len(p.signers) }

// ConsumerID returns the id of consumer i.
func (p *Population) ConsumerID(i int) string { return p.consumers[i].String() }

// ConsumerUUID returns the id of consumer i as a UUID.
func (p *Population) ConsumerUUID(i int) uuid.UUID { return p.consumers[i] }

// Entities is the number of entities, consumers and signers: Next's i runs
// over [0, Entities()).
func (p *Population) Entities() int { return len(p.versions) }

// Next returns the message of the next event of entity i (consumer i when
// i < People(), else signer i-People()): its upsert with the next entity
// version, created on the first call and changed on every later one.
func (p *Population) Next(i int) (*nats.Msg, error) {
	p.versions[i]++
	v := p.versions[i]
	var data any
	if i < len(p.consumers) {
		data = p.consumer(i, v)
	} else {
		data = p.signer(i-len(p.consumers), v)
	}
	ev, err := events.NewEvent("urn:lookupd:loadtest-soak", uint64(v), data)
	if err != nil {
		return nil, err
	}
	return events.NewMsg(ev)
}

// NextRandom returns the message of the next version of an entity drawn at
// random, consumers and signers alike.
func (p *Population) NextRandom() (*nats.Msg, error) {
	return p.Next(p.rng.IntN(len(p.versions)))
}

// consumer returns consumer i at version v.
func (p *Population) consumer(i int, v uint32) events.Consumer {
	return events.Consumer{ConsumerID: p.consumers[i].String(), BusinessID: p.business,
		FirstName: "First" + strconv.Itoa(i), MiddleName: "V" + strconv.FormatUint(uint64(v), 10), LastName: "Last"}
}

// signer returns signer j at version v, a full one: address, phone, SSN
// and date of birth.
func (p *Population) signer(j int, v uint32) events.Signer {
	n := int(p.signers[j][0])<<8 | int(p.signers[j][1]) // 0..65535, stable per signer
	return events.Signer{SignerID: p.signers[j].String(), ConsumerID: p.consumers[j%len(p.consumers)].String(),
		FirstName: "Signer" + strconv.Itoa(j), MiddleName: "V" + strconv.FormatUint(uint64(v), 10), LastName: "Soak",
		HIPAAAuthorized: j%2 == 0, AccountAccess: events.AccountAccessPHI,
		Status: events.SignerStatusActive, Type: events.SignerTypeAuthorizedSigner,
		Address: &events.Address{Line1: strconv.Itoa(j) + " Main Street", City: "Springfield", State: "IL", ZipCode: "62701", Country: "US"},
		Phone:   &events.Phone{CountryCode: "+1", AreaCode: "217", Number: fmt.Sprintf("555%04d", n%10000)},
		SSN:     fmt.Sprintf("9%02d-%02d-%04d", n%100, 10+n%89, n%10000), DateOfBirth: fmt.Sprintf("19%02d-%02d-%02d", 40+n%60, 1+n%12, 1+n%28)}
}
