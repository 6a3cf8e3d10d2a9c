package projector_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/projector"
)

// A read model fed from the stream: an event published through the
// contract is applied, and read back once the projector's position has
// reached its sequence.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "projector-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	// An in-process NATS server with the stream as deployed.
	ns, err := dev.StartNATS("example", filepath.Join(dir, "nats"))
	if err != nil {
		panic(err)
	}
	defer ns.Close()
	nc, err := nats.Connect(ns.URL)
	if err != nil {
		panic(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		panic(err)
	}
	if err := dev.EnsurePersonsStream(ctx, js, "PERSONS"); err != nil {
		panic(err)
	}

	// The read model and its projector.
	store, err := projector.Open(filepath.Join(dir, "model"), projector.StoreOptions{MemoryBudget: projector.MinMemoryBudget})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	p := projector.New(js, store, projector.Config{Stream: "PERSONS"})
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			panic(err)
		}
	}()

	e, err := events.NewEvent("crm", 1, events.Consumer{ConsumerID: "c0000000-0000-4000-8000-00000000000a",
		BusinessID: "b0000000-0000-4000-8000-00000000000b", FirstName: "Ada", LastName: "Lovelace"})
	if err != nil {
		panic(err)
	}
	seq, err := events.NewPublisher(js).Publish(ctx, e)
	if err != nil {
		panic(err)
	}
	if err := p.Position().Wait(ctx, seq); err != nil {
		panic(err)
	}
	person, err := store.Person(ctx, "c0000000-0000-4000-8000-00000000000a")
	if err != nil {
		panic(err)
	}
	fmt.Println(person.FirstName, person.LastName, person.Type)
	// Output: Ada Lovelace CONSUMER
}
