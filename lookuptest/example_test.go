package lookuptest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/events"
	"github.com/lookup/persons/lookuptest"
)

// A test publishes its fixtures through the event contract, then reads
// them with the client. In a test, lookuptest.New(t) does the same and
// stops the server when the test ends.
func Example() {
	ctx := context.Background()
	srv, err := lookuptest.Start(ctx)
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	e, err := events.NewEvent("onboarding", 1, events.Consumer{
		ConsumerID: "c0000000-0000-4000-8000-00000000000a", BusinessID: "b0000000-0000-4000-8000-00000000000b",
		FirstName: "Ada", LastName: "Lovelace"})
	if err != nil {
		panic(err)
	}
	seq, err := srv.Publish(ctx, e)
	if err != nil {
		panic(err)
	}
	// Read your write: the answer reflects at least the event's sequence.
	res, err := srv.Client().GetPerson(ctx, "c0000000-0000-4000-8000-00000000000a", client.MinPosition(seq))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Person.FirstName, res.Person.Type, res.Meta.Position >= seq)
	// Output: Ada CONSUMER true
}

// Tokens the server refuses, on purpose.
func ExampleServer_Token() {
	ctx := context.Background()
	srv, err := lookuptest.Start(ctx)
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	expired, err := srv.Token(lookuptest.Expired())
	if err != nil {
		panic(err)
	}
	c, err := client.New(srv.APIURL(), client.WithToken(expired))
	if err != nil {
		panic(err)
	}
	_, err = c.GetPerson(ctx, "c0000000-0000-4000-8000-00000000000a")
	fmt.Println(errors.Is(err, client.ErrUnauthorized))
	// Output: true
}

// Fixtures by their data: the server builds each event and counts each
// entity's versions, so a second upsert and a delete need no version.
func ExampleServer_Upsert() {
	ctx := context.Background()
	srv, err := lookuptest.Start(ctx)
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	ada := events.Consumer{ConsumerID: "c0000000-0000-4000-8000-00000000000a",
		BusinessID: "b0000000-0000-4000-8000-00000000000b", FirstName: "Ada", LastName: "Lovelace"}
	if _, err := srv.Upsert(ctx, ada); err != nil { // version 1, applied when Upsert returns
		panic(err)
	}
	ada.FirstName = "Augusta"
	if _, err := srv.Upsert(ctx, ada); err != nil { // version 2
		panic(err)
	}
	res, err := srv.Client().GetPerson(ctx, ada.ConsumerID)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Person.FirstName)

	if _, err := srv.Delete(ctx, ada); err != nil { // version 3
		panic(err)
	}
	_, err = srv.Client().GetPerson(ctx, ada.ConsumerID)
	fmt.Println(errors.Is(err, client.ErrNotFound))
	// Output:
	// Augusta
	// true
}

// A failure of the service's on demand, and what the server answered.
func ExampleServer_FailNext() {
	ctx := context.Background()
	srv, err := lookuptest.Start(ctx)
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	srv.FailNext(1, client.ErrNotReady)
	c := srv.Client(client.WithRetries(0)) // each 503 at once
	_, err = c.GetPerson(ctx, "c0000000-0000-4000-8000-00000000000a")
	fmt.Println(errors.Is(err, client.ErrNotReady))
	_, err = c.GetPerson(ctx, "c0000000-0000-4000-8000-00000000000a")
	fmt.Println(errors.Is(err, client.ErrNotFound))

	reqs, err := srv.Requests(ctx)
	if err != nil {
		panic(err)
	}
	for _, r := range reqs {
		fmt.Println(r.Method, r.Path, r.Status, r.Injected)
	}
	// Output:
	// true
	// true
	// GET /api/v1/persons/c0000000-0000-4000-8000-00000000000a 503 true
	// GET /api/v1/persons/c0000000-0000-4000-8000-00000000000a 404 false
}
