package client_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/events"
	"github.com/lookup/persons/lookuptest"
)

// startExample starts an in-process lookupd holding one consumer.
func startExample(ctx context.Context) *lookuptest.Server {
	srv, err := lookuptest.Start(ctx)
	if err != nil {
		panic(err)
	}
	e, err := events.NewEvent("crm", 1, events.Consumer{ConsumerID: "c0000000-0000-4000-8000-00000000000a",
		BusinessID: "b0000000-0000-4000-8000-00000000000b", FirstName: "Ada", LastName: "Lovelace"})
	if err != nil {
		panic(err)
	}
	if _, err := srv.Seed(ctx, e); err != nil {
		panic(err)
	}
	return srv
}

func ExampleClient_GetPerson() {
	ctx := context.Background()
	srv := startExample(ctx)
	defer srv.Close()
	token, _ := srv.Token() // in production: your identity provider's

	c, err := client.New(srv.APIURL(), client.WithToken(token), client.WithUserAgent("onboarding/1.0"))
	if err != nil {
		panic(err)
	}
	res, err := c.GetPerson(ctx, "c0000000-0000-4000-8000-00000000000a", client.RequestID("req-42"))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Person.FirstName, res.Person.LastName, res.Meta.RequestID)
	// Output: Ada Lovelace req-42
}

// Every answer other than 2xx is a *Problem; errors.Is tells its type.
func ExampleProblem() {
	ctx := context.Background()
	srv := startExample(ctx)
	defer srv.Close()

	_, err := srv.Client().AuthorizedSigners(ctx, "c0000000-0000-4000-8000-00000000000a")
	var p *client.Problem
	if errors.Is(err, client.ErrNotFound) && errors.As(err, &p) {
		fmt.Println(p.Status, p.Title)
	}
	// Output: 404 Resource not found
}

// A session reads its own writes: the sequence a publish returned is the
// least position of every later read.
func ExampleSession() {
	ctx := context.Background()
	srv := startExample(ctx)
	defer srv.Close()

	e, _ := events.NewEvent("crm", 2, events.Consumer{ConsumerID: "c0000000-0000-4000-8000-00000000000a",
		BusinessID: "b0000000-0000-4000-8000-00000000000b", FirstName: "Augusta", LastName: "Lovelace"})
	seq, err := srv.Publish(ctx, e) // events.Publisher.Publish in production
	if err != nil {
		panic(err)
	}
	s := srv.Client().Session()
	s.Observe(seq)
	res, err := s.GetPerson(ctx, "c0000000-0000-4000-8000-00000000000a")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Person.FirstName)
	// Output: Augusta
}
