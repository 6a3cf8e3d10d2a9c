package loadtest

import (
	"strings"
	"testing"

	"github.com/lookup/persons/events"
)

// TestPopulationNext: every event Next makes decodes under the contract,
// for the entity asked, with versions counting up per entity.
func TestPopulationNext(t *testing.T) {
	p := NewPopulation(3, 5, 1)
	if p.People() != 3 || p.Signers() != 5 || p.Entities() != 8 {
		t.Fatalf("population of %d people, %d signers, %d entities; want 3, 5, 8", p.People(), p.Signers(), p.Entities())
	}
	tests := []struct {
		name    string
		i       int
		version uint64
		subject string // prefix
	}{
		{name: "consumer", i: 0, version: 1, subject: "persons.consumer." + p.ConsumerID(0)},
		{name: "consumer again", i: 0, version: 2, subject: "persons.consumer." + p.ConsumerID(0)},
		{name: "signer 0 under consumer 0", i: 3, version: 1, subject: "persons.authorized_signer." + p.ConsumerID(0) + "."},
		{name: "signer 4 under consumer 1", i: 7, version: 1, subject: "persons.authorized_signer." + p.ConsumerID(1) + "."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := p.Next(tt.i)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := events.Decode(m.Subject, m.Data)
			if err != nil {
				t.Fatal(err)
			}
			if ev.EntityVersion != tt.version || !strings.HasPrefix(m.Subject, tt.subject) {
				t.Errorf("event on %s version %d, want %s... version %d", m.Subject, ev.EntityVersion, tt.subject, tt.version)
			}
		})
	}
}
