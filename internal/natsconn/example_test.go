package natsconn_test

import (
	"context"
	"log"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/natsconn"
)

// A system of record publishes its changes with events.Publisher over a
// connection that authenticates with a credentials file and verifies the
// server's certificate against a CA (mutual TLS with CertFile and KeyFile).
// A refusal of the credentials is an error at once (natsconn.ErrRefused).
func ExampleConnect() {
	if err := publish(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func publish(ctx context.Context) error {
	nc, err := natsconn.Connect("tls://nats.example:4222", natsconn.Security{
		CredsFile: "/etc/onboarding/publisher.creds",
		CAFile:    "/etc/onboarding/ca.crt",
	}, natsconn.Config{Name: "onboarding", Logger: slog.Default()})
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ev, err := events.NewEvent("urn:onboarding", 1, events.Consumer{
		ConsumerID: "0b6b1f7e-3f0e-4a53-9a55-7d7d1c1a2b3c", BusinessID: "7f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f",
		FirstName: "Ada", LastName: "Lovelace",
	})
	if err != nil {
		return err
	}
	_, err = events.NewPublisher(js).Publish(ctx, ev)
	return err
}
