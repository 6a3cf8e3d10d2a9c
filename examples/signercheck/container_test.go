//go:build integration

package signercheck_test

import (
	"os"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"

	"github.com/lookup/persons/lookupdcontainer"
)

// inContainers is lookupd and NATS in containers.
type inContainers struct{ *lookupdcontainer.Container }

// stale stops the NATS server: once lookupd has lost the stream for
// longer than the staleness bound, every read is stale.
func (c inContainers) stale(t *testing.T) {
	timeout := 10 * time.Second
	if err := c.NATS.Stop(t.Context(), &timeout); err != nil {
		t.Fatal(err)
	}
}

func TestInContainers(t *testing.T) {
	img := os.Getenv("LOOKUPD_IMAGE")
	if img == "" {
		img = lookupdcontainer.DefaultImage()
	}
	opts := []testcontainers.ContainerCustomizer{lookupdcontainer.WithMaxStaleness(2 * time.Second)}
	if nats := os.Getenv("NATS_IMAGE"); nats != "" {
		opts = append(opts, lookupdcontainer.WithNATSImage(nats))
	}
	ctr, err := lookupdcontainer.Run(t.Context(), img, opts...)
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	runSuite(t, inContainers{ctr})
}
