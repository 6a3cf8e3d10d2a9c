package loadtest

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/testing/fixtures"
)

// The conventions of every lookupd the tool starts, and of its tokens.
const (
	// Issuer and Audience are those of the tokens "lookupd token" mints
	// by default (those of lookupd dev), which every lookupd started is
	// told to require.
	Issuer   = "urn:lookupd:dev"
	Audience = "lookup"
	// Scopes are the scopes of the lookups' tokens: expand needs the
	// second.
	Scopes = "read:persons read:persons:ssn"
	// Stream is the source stream of the model and of the soak;
	// AuditStream lookupd's default audit stream.
	Stream      = "PERSONS"
	AuditStream = "PERSONS_AUDIT"
)

// Loaded is what publishing a Population took.
type Loaded struct {
	Events    int           // events published
	LastSeq   uint64        // stream sequence of the last
	Published time.Duration // publishing them
}

// LoadPopulation publishes the creation of every entity of pop, consumers
// then signers, in bulk.
func LoadPopulation(ctx context.Context, js jetstream.JetStream, pop *fixtures.Population, progress io.Writer) (Loaded, error) {
	n := pop.Entities()
	fmt.Fprintf(progress, "publishing %d people and %d signers ...\n", pop.People(), pop.Signers())
	start := time.Now()
	next := time.Now().Add(10 * time.Second)
	last, err := fixtures.PublishBulk(ctx, js, n, pop.Next, func(done int) {
		if time.Now().After(next) {
			fmt.Fprintf(progress, "  %d of %d events published\n", done, n)
			next = time.Now().Add(10 * time.Second)
		}
	})
	if err != nil {
		return Loaded{}, err
	}
	l := Loaded{Events: n, LastSeq: last, Published: time.Since(start)}
	fmt.Fprintf(progress, "%d events published in %v\n", n, l.Published.Round(time.Second))
	return l, nil
}
