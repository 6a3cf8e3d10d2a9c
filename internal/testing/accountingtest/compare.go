package accountingtest

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/accounting/fhir"
)

// The accounting's index held to the ledger stream it follows, for the
// tests and the load tool (cmd/loadtest), which reach the service's
// internals through test support alone.

// Digest is what a set of records says per person and per chain
// (accounting.Digest): two digests are compared with Diff and DiffPersons.
type Digest = accounting.Digest

// NewDigest returns an empty Digest, to Add records to.
func NewDigest() *Digest { return accounting.NewDigest() }

// ScanDigest reads the ledger stream up to upTo (0: all) into a Digest.
func ScanDigest(ctx context.Context, js jetstream.JetStream, stream string, upTo uint64) (*Digest, error) {
	return accounting.ScanDigest(ctx, js, stream, upTo)
}

// IndexDigest opens the index in dir, its service stopped, and returns the
// Digest of the records it holds from the messages up to upTo (0: all).
func IndexDigest(dir string, upTo uint64) (*Digest, error) {
	x, err := accounting.Open(dir, accounting.Options{})
	if err != nil {
		return nil, err
	}
	defer x.Close()
	return x.Digest(upTo)
}

// SearchClient reads a person's whole history from the accounting
// service's FHIR search, as lookupd audit --accounting-url does.
type SearchClient = fhir.Client
