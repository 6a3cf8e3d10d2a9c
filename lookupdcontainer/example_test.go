//go:build integration

package lookupdcontainer_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/events"
	"github.com/lookup/persons/lookupdcontainer"
	"github.com/lookup/persons/lookuptest"
)

// A caller's integration suite: the released image, fixtures through the
// event contract, a token of the test's own key.
func ExampleRun() {
	ctx := context.Background()
	ctr, err := lookupdcontainer.Run(ctx, image(), natsImage())
	if err != nil {
		panic(err)
	}
	defer func() { _ = ctr.Terminate(ctx) }()

	e, err := events.NewEvent("onboarding", 1, events.Consumer{ConsumerID: "c0000000-0000-4000-8000-00000000000a",
		BusinessID: "b0000000-0000-4000-8000-00000000000b", FirstName: "Ada", LastName: "Lovelace"})
	if err != nil {
		panic(err)
	}
	if _, err := ctr.Seed(ctx, e); err != nil {
		panic(err)
	}
	c, err := ctr.Client()
	if err != nil {
		panic(err)
	}
	res, err := c.GetPerson(ctx, "c0000000-0000-4000-8000-00000000000a")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Person.FirstName)

	expired, _ := ctr.Token(lookuptest.Expired())
	c2, _ := client.New(ctr.APIURL(), client.WithToken(expired))
	_, err = c2.GetPerson(ctx, "c0000000-0000-4000-8000-00000000000a")
	fmt.Println(errors.Is(err, client.ErrUnauthorized))
	// Output:
	// Ada
	// true
}
