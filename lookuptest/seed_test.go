package lookuptest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/events"
	"github.com/lookup/persons/lookuptest"
)

func TestVersionsCount(t *testing.T) {
	var v lookuptest.Versions
	ada := events.Consumer{ConsumerID: consumerID, BusinessID: business, FirstName: "Ada", LastName: "Lovelace"}
	want := func(e events.Event, err error, typ events.Type, version uint64) {
		t.Helper()
		if err != nil || e.Type != typ || e.EntityVersion != version || e.Source != lookuptest.EventSource || e.ID == "" {
			t.Fatalf("event %+v, %v; want a %s at version %d", e, err, typ, version)
		}
	}
	e, err := v.Upsert(ada)
	want(e, err, events.TypeConsumerUpserted, 1)
	upper := ada
	upper.ConsumerID = strings.ToUpper(consumerID) // the same consumer
	e, err = v.Upsert(upper)
	want(e, err, events.TypeConsumerUpserted, 2)
	e, err = v.Delete(ada)
	want(e, err, events.TypeConsumerDeleted, 3)
	e, err = v.Delete(events.ConsumerDeleted{ConsumerID: consumerID})
	want(e, err, events.TypeConsumerDeleted, 4)
	s := events.Signer{SignerID: signerID, ConsumerID: consumerID, FirstName: "Grace", LastName: "Hopper", HIPAAAuthorized: true,
		AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusActive, Type: events.SignerTypeGuardian}
	e, err = v.Upsert(s)
	want(e, err, events.TypeSignerUpserted, 1) // another entity
	v.Observe(events.Event{Type: events.TypeSignerUpserted, EntityVersion: 10, Data: s})
	e, err = v.Delete(s)
	want(e, err, events.TypeSignerDeleted, 11)

	if _, err := v.Upsert(events.ConsumerDeleted{ConsumerID: consumerID}); err == nil {
		t.Error("Upsert took a deletion")
	}
	if _, err := v.Delete("consumer"); err == nil {
		t.Error("Delete took a string")
	}
	bad := ada
	bad.FirstName = ""
	if _, err := v.Upsert(bad); !errors.Is(err, events.ErrInvalidEvent) {
		t.Errorf("an upsert the contract refuses: %v", err)
	}
	e, err = v.Upsert(ada)
	want(e, err, events.TypeConsumerUpserted, 5) // the refused one took no version
}

// TestUpsertAndDelete: the versions are the server's to count, across
// Upsert, Delete and what the test publishes itself.
func TestUpsertAndDelete(t *testing.T) {
	srv := lookuptest.New(t)
	ctx := t.Context()
	c := srv.Client()
	ada := events.Consumer{ConsumerID: consumerID, BusinessID: business, FirstName: "Ada", LastName: "Lovelace"}
	name := func() string {
		t.Helper()
		res, err := c.GetPerson(ctx, consumerID)
		if errors.Is(err, client.ErrNotFound) {
			return "(none)"
		}
		if err != nil {
			t.Fatal(err)
		}
		return res.Person.FirstName
	}
	if _, err := srv.Upsert(ctx, ada); err != nil {
		t.Fatal(err)
	}
	ada.FirstName = "Augusta"
	if _, err := srv.Upsert(ctx, ada); err != nil || name() != "Augusta" {
		t.Fatalf("second upsert: %v; name %s", err, name())
	}
	if _, err := srv.Delete(ctx, ada); err != nil || name() != "(none)" {
		t.Fatalf("delete: %v; name %s", err, name())
	}
	ada.FirstName = "Ada"
	if _, err := srv.Upsert(ctx, ada); err != nil || name() != "Ada" {
		t.Fatalf("upsert after the delete: %v; name %s", err, name())
	}
	// A version the test gave by hand is counted from.
	if _, err := srv.Seed(ctx, consumer(t, 9, "Byron")); err != nil || name() != "Byron" {
		t.Fatalf("seed at 9: %v; name %s", err, name())
	}
	if _, err := srv.Upsert(ctx, ada); err != nil || name() != "Ada" {
		t.Fatalf("upsert after a seed at 9: %v; name %s", err, name())
	}
	bad := ada
	bad.LastName = ""
	if _, err := srv.Upsert(ctx, events.Consumer{ConsumerID: consumerID, BusinessID: business, FirstName: "Ann", LastName: "X"}, bad); !errors.Is(err, events.ErrInvalidEvent) || name() != "Ada" {
		t.Fatalf("an invalid upsert: %v; name %s (want Ada: nothing published)", err, name())
	}
}
