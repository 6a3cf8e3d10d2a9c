//go:build integration

package lookupdcontainer_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/events"
	"github.com/lookup/persons/lookupdcontainer"
	"github.com/lookup/persons/lookuptest"
)

const (
	business   = "b0000000-0000-4000-8000-000000000001"
	consumerID = "c0000000-0000-4000-8000-000000000001"
)

// image is the lookupd image under test: LOOKUPD_IMAGE (make integration
// sets it), else the module's default.
func image() string {
	if img := os.Getenv("LOOKUPD_IMAGE"); img != "" {
		return img
	}
	return lookupdcontainer.DefaultImage()
}

func natsImage() testcontainers.ContainerCustomizer {
	if img := os.Getenv("NATS_IMAGE"); img != "" {
		return lookupdcontainer.WithNATSImage(img)
	}
	return lookupdcontainer.WithNATSImage(lookupdcontainer.DefaultNATSImage)
}

func consumer(t testing.TB, version uint64, first string) events.Event {
	t.Helper()
	e, err := events.NewEvent("lookupdcontainer-test", version, events.Consumer{ConsumerID: consumerID, BusinessID: business, FirstName: first, LastName: "Lovelace"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRun(t *testing.T) {
	ctx := t.Context()
	ctr, err := lookupdcontainer.Run(ctx, image(), natsImage(), lookupdcontainer.WithTenancy("business_ids"))
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	var _ lookuptest.Lookupd = ctr

	if _, err := ctr.Seed(ctx, consumer(t, 1, "Ada")); err != nil {
		t.Fatal(err)
	}
	seq, err := ctr.Publish(ctx, consumer(t, 2, "Augusta"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ctr.Token(lookuptest.Tenants(business))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(ctr.APIURL(), client.WithToken(tok))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.GetPerson(ctx, consumerID, client.MinPosition(seq))
	if err != nil || res.Person.FirstName != "Augusta" {
		t.Fatalf("read after write: %+v, %v", res, err)
	}

	for name, tc := range map[string]struct {
		opts []lookuptest.TokenOption
		want error
	}{
		"expired":        {[]lookuptest.TokenOption{lookuptest.Tenants(business), lookuptest.Expired()}, client.ErrUnauthorized},
		"another key":    {[]lookuptest.TokenOption{lookuptest.Tenants(business), lookuptest.SignedByAnotherKey()}, client.ErrUnauthorized},
		"no scope":       {[]lookuptest.TokenOption{lookuptest.Tenants(business), lookuptest.Scopes()}, client.ErrInsufficientScope},
		"another tenant": {[]lookuptest.TokenOption{lookuptest.Tenants("b0000000-0000-4000-8000-000000000002")}, client.ErrForbidden},
	} {
		t.Run(name, func(t *testing.T) {
			tok, err := ctr.Token(tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			c, err := client.New(ctr.APIURL(), client.WithToken(tok))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.GetPerson(t.Context(), consumerID); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("not found", func(t *testing.T) {
		if _, err := c.GetPerson(t.Context(), "d0000000-0000-4000-8000-000000000009"); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("admin", func(t *testing.T) {
		resp, err := http.Get(ctr.AdminURL() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/readyz = %d", resp.StatusCode)
		}
	})
	t.Run("invalid seed publishes nothing", func(t *testing.T) {
		bad := consumer(t, 3, "X")
		bad.Data = events.Consumer{ConsumerID: "nope", BusinessID: business, FirstName: "A", LastName: "B"}
		if _, err := ctr.Seed(t.Context(), consumer(t, 3, "Ann"), bad); !errors.Is(err, events.ErrInvalidEvent) {
			t.Fatalf("err = %v", err)
		}
		res, err := c.GetPerson(t.Context(), consumerID)
		if err != nil || res.Person.FirstName != "Augusta" || res.Meta.Position != seq {
			t.Fatalf("after an invalid seed: %+v, %v (want Augusta at %d)", res, err, seq)
		}
	})
}

func TestRunRefusesBadOptions(t *testing.T) {
	for name, opt := range map[string]testcontainers.ContainerCustomizer{
		"empty claim":        lookupdcontainer.WithTenancy(""),
		"negative staleness": lookupdcontainer.WithMaxStaleness(-time.Second),
		"unknown audit mode": lookupdcontainer.WithAudit("sometimes"),
	} {
		t.Run(name, func(t *testing.T) {
			ctr, err := lookupdcontainer.Run(t.Context(), image(), opt)
			testcontainers.CleanupContainer(t, ctr)
			if err == nil {
				t.Fatal("Run succeeded")
			}
		})
	}
}

// BenchmarkRun: how long a caller's suite waits for the service (issue
// 36: at most 15 s).
func BenchmarkRun(b *testing.B) {
	for b.Loop() {
		ctr, err := lookupdcontainer.Run(context.Background(), image(), natsImage())
		if err != nil {
			b.Fatal(err)
		}
		if err := ctr.Terminate(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
