package lookupdcontainer_test

import (
	"context"
	"testing"

	"github.com/testcontainers/testcontainers-go"

	"github.com/lookup/persons/lookupdcontainer"
)

// TestTerminateWhatRunDidNotStart: the *Container a failed Run returns is
// nil, and one Run gave up on may hold nothing yet; Terminate on either
// returns nil rather than panicking over the error Run returned. No
// Docker is needed.
func TestTerminateWhatRunDidNotStart(t *testing.T) {
	var none *lookupdcontainer.Container
	if err := none.Terminate(context.Background()); err != nil {
		t.Fatalf("Terminate on a nil *Container: %v", err)
	}
	if err := new(lookupdcontainer.Container).Terminate(context.Background()); err != nil {
		t.Fatalf("Terminate on an empty Container: %v", err)
	}
	if err := testcontainers.TerminateContainer(none); err != nil {
		t.Fatalf("testcontainers.TerminateContainer on a nil *Container: %v", err)
	}
}
