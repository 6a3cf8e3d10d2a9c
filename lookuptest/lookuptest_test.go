package lookuptest_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/events"
	"github.com/lookup/persons/lookuptest"
)

const (
	business      = "b0000000-0000-4000-8000-000000000001"
	otherBusiness = "b0000000-0000-4000-8000-000000000002"
	consumerID    = "c0000000-0000-4000-8000-000000000001"
	signerID      = "50000000-0000-4000-8000-000000000001"
)

func event(t testing.TB, version uint64, data any) events.Event {
	t.Helper()
	e, err := events.NewEvent("lookuptest-test", version, data)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func consumer(t testing.TB, version uint64, first string) events.Event {
	return event(t, version, events.Consumer{ConsumerID: consumerID, BusinessID: business, FirstName: first, LastName: "Lovelace"})
}

func signer(t testing.TB) events.Event {
	return event(t, 1, events.Signer{SignerID: signerID, ConsumerID: consumerID, FirstName: "Grace", LastName: "Hopper",
		HIPAAAuthorized: true, AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusActive,
		Type: events.SignerTypeGuardian, SSN: "123-45-6789", DateOfBirth: "1950-01-02"})
}

func TestReadYourWrite(t *testing.T) {
	srv := lookuptest.New(t)
	ctx := t.Context()
	if _, err := srv.Seed(ctx, consumer(t, 1, "Ada"), signer(t)); err != nil {
		t.Fatal(err)
	}
	seq, err := srv.Publish(ctx, consumer(t, 2, "Augusta"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := srv.Client().GetPerson(ctx, consumerID, client.MinPosition(seq))
	if err != nil {
		t.Fatal(err)
	}
	if res.Person.FirstName != "Augusta" || res.Meta.Position < seq || res.Meta.RequestID == "" {
		t.Fatalf("read after write: %+v", res)
	}
	signers, err := srv.Client().AuthorizedSigners(ctx, consumerID, client.Expand(client.ProtectedPersonalData), client.SSN(client.SSNMasked))
	if err != nil {
		t.Fatal(err)
	}
	if len(signers.Items) != 1 || signers.Items[0].Protected.SocialSecurityNumber != "***-**-6789" {
		t.Fatalf("signers: %+v", signers.Items)
	}
}

// TestProblems: each refusal reaches the caller as the *Problem errors.Is
// matches.
func TestProblems(t *testing.T) {
	srv := lookuptest.New(t, lookuptest.WithTenancy("business_ids"))
	if _, err := srv.Seed(t.Context(), consumer(t, 1, "Ada")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tok  []lookuptest.TokenOption
		id   string
		want error
	}{
		{"a tenant's own consumer", []lookuptest.TokenOption{lookuptest.Tenants(business)}, consumerID, nil},
		{"unknown person", []lookuptest.TokenOption{lookuptest.Tenants(business)}, "d0000000-0000-4000-8000-000000000009", client.ErrNotFound},
		{"another tenant", []lookuptest.TokenOption{lookuptest.Tenants(otherBusiness)}, consumerID, client.ErrForbidden},
		{"no scope", []lookuptest.TokenOption{lookuptest.Tenants(business), lookuptest.Scopes()}, consumerID, client.ErrInsufficientScope},
		{"expired", []lookuptest.TokenOption{lookuptest.Tenants(business), lookuptest.Expired()}, consumerID, client.ErrUnauthorized},
		{"another audience", []lookuptest.TokenOption{lookuptest.Tenants(business), lookuptest.Audience("someone-else")}, consumerID, client.ErrUnauthorized},
		{"another issuer", []lookuptest.TokenOption{lookuptest.Tenants(business), lookuptest.Issuer("https://evil.invalid/")}, consumerID, client.ErrUnauthorized},
		{"another key", []lookuptest.TokenOption{lookuptest.Tenants(business), lookuptest.SignedByAnotherKey()}, consumerID, client.ErrUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := srv.Token(tc.tok...)
			if err != nil {
				t.Fatal(err)
			}
			c, err := client.New(srv.APIURL(), client.WithToken(tok))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetPerson(t.Context(), tc.id)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var p *client.Problem
			if !errors.As(err, &p) || !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want a problem matching %v", err, tc.want)
			}
		})
	}
	t.Run("no token", func(t *testing.T) {
		c, err := client.New(srv.APIURL())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetPerson(t.Context(), consumerID); !errors.Is(err, client.ErrUnauthorized) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestPausedEvents: an event published while events are paused is not
// visible: a read of its position answers position-not-reached, and once
// the oldest is older than the bound, stale; resumed, both clear.
func TestPausedEvents(t *testing.T) {
	srv := lookuptest.New(t, lookuptest.WithMaxStaleness(300*time.Millisecond), lookuptest.WithMaxPositionWait(100*time.Millisecond))
	ctx := t.Context()
	if _, err := srv.Seed(ctx, consumer(t, 1, "Ada")); err != nil {
		t.Fatal(err)
	}
	srv.PauseEvents()
	seq, err := srv.Publish(ctx, consumer(t, 2, "Augusta"))
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Client(client.WithRetries(0))
	_, err = c.GetPerson(ctx, consumerID, client.MinPosition(seq))
	var p *client.Problem
	if !errors.Is(err, client.ErrPositionNotReached) || !errors.As(err, &p) || p.Position != seq-1 || p.RetryAfter != time.Second {
		t.Fatalf("err = %v (%+v), want position-not-reached at %d with Retry-After 1s", err, p, seq-1)
	}
	pollUntil(t, func() error {
		_, err := c.GetPerson(ctx, consumerID)
		if !errors.Is(err, client.ErrStale) {
			return errors.New("not stale yet: " + errString(err))
		}
		return nil
	})
	srv.ResumeEvents()
	if err := srv.WaitForPosition(ctx, seq); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, func() error {
		res, err := c.GetPerson(ctx, consumerID, client.MinPosition(seq))
		if err != nil {
			return err
		}
		if res.Person.FirstName != "Augusta" {
			return errors.New("old name " + res.Person.FirstName)
		}
		return nil
	})
}

// TestRetryAcrossAPause: the client's retry of position-not-reached
// succeeds once events resume.
func TestRetryAcrossAPause(t *testing.T) {
	srv := lookuptest.New(t, lookuptest.WithMaxPositionWait(50*time.Millisecond))
	ctx := t.Context()
	srv.PauseEvents()
	seq, err := srv.Publish(ctx, consumer(t, 1, "Ada"))
	if err != nil {
		t.Fatal(err)
	}
	first503 := make(chan struct{})
	var once sync.Once
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && resp.StatusCode == http.StatusServiceUnavailable {
			once.Do(func() { close(first503) })
		}
		return resp, err
	})}
	s := srv.Client(client.WithRetries(5), client.WithHTTPClient(hc)).Session()
	s.Observe(seq)
	done := make(chan error, 1)
	go func() {
		res, err := s.GetPerson(ctx, consumerID)
		if err == nil && res.Meta.Attempts < 2 {
			err = errors.New("answered without a retry while paused")
		}
		done <- err
	}()
	select {
	case <-first503:
	case err := <-done:
		t.Fatalf("the call ended before a 503: %v", err)
	}
	srv.ResumeEvents()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestSeedInvalidPublishesNothing(t *testing.T) {
	srv := lookuptest.New(t)
	bad := consumer(t, 1, "Ada")
	bad.Data = events.Consumer{ConsumerID: "not-a-uuid", BusinessID: business, FirstName: "A", LastName: "B"}
	_, err := srv.Seed(t.Context(), consumer(t, 1, "Ada"), bad)
	var inv *events.InvalidEventError
	if !errors.Is(err, events.ErrInvalidEvent) || !errors.As(err, &inv) || !strings.Contains(err.Error(), "event 2 of 2") {
		t.Fatalf("err = %v, want the contract's error naming event 2", err)
	}
	nc, err := nats.Connect(srv.NATSURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(t.Context(), "PERSONS")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := st.Info(t.Context()); err != nil || info.State.Msgs != 0 {
		t.Fatalf("stream holds %d messages after an invalid seed (err %v), want 0", info.State.Msgs, err)
	}
}

func TestOptionsThatMakeNoSense(t *testing.T) {
	srv := lookuptest.New(t)
	for _, tc := range []struct {
		name string
		opts []lookuptest.TokenOption
		want string
	}{
		{"tenants without tenancy", []lookuptest.TokenOption{lookuptest.Tenants(business)}, "without tenancy"},
		{"negative lifetime", []lookuptest.TokenOption{lookuptest.ExpiresIn(-time.Minute)}, "positive"},
		{"expired and a lifetime", []lookuptest.TokenOption{lookuptest.Expired(), lookuptest.ExpiresIn(time.Minute)}, "both"},
		{"a lifetime of the default's length, then expired", []lookuptest.TokenOption{lookuptest.ExpiresIn(lookuptest.DefaultTokenTTL), lookuptest.Expired()}, "both"},
		{"scopes twice", []lookuptest.TokenOption{lookuptest.Scopes(), lookuptest.Scopes(lookuptest.ScopeRead)}, "twice"},
		{"a scope with a space", []lookuptest.TokenOption{lookuptest.Scopes("read:persons read:persons:ssn")}, "without spaces"},
		{"empty subject", []lookuptest.TokenOption{lookuptest.Subject("")}, "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tok, err := srv.Token(tc.opts...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Token = %q, %v; want an error with %q", tok, err, tc.want)
			}
		})
	}
	for name, opt := range map[string]lookuptest.Option{
		"negative staleness": lookuptest.WithMaxStaleness(-time.Second),
		"empty claim":        lookuptest.WithTenancy(""),
		"zero wait":          lookuptest.WithMaxPositionWait(0),
		"unknown audit mode": lookuptest.WithAudit("sometimes"),
	} {
		t.Run(name, func(t *testing.T) {
			if s, err := lookuptest.Start(t.Context(), opt); err == nil {
				_ = s.Close()
				t.Fatal("Start succeeded")
			}
		})
	}
}

func TestAuditedDisclosure(t *testing.T) {
	srv := lookuptest.New(t, lookuptest.WithAudit("required"))
	if _, err := srv.Seed(t.Context(), consumer(t, 1, "Ada"), signer(t)); err != nil {
		t.Fatal(err)
	}
	res, err := srv.Client().AuthorizedSigners(t.Context(), consumerID, client.Expand(client.ProtectedPersonalData), client.Purpose("kyc"))
	if err != nil || res.Items[0].Protected.SocialSecurityNumber != "6789" {
		t.Fatalf("res, err = %+v, %v", res, err)
	}
}

func TestStartForTestMain(t *testing.T) {
	srv, err := lookuptest.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Seed(t.Context(), consumer(t, 1, "Ada")); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := client.New(srv.APIURL()); err != nil {
		t.Fatal(err)
	}
}

// pollUntil calls f until it returns nil, for at most 20 seconds.
func pollUntil(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// BenchmarkNew: how long a test waits for a server (issue 36: at most 1 s).
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		srv, err := lookuptest.Start(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		if err := srv.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDemoDataOnlyWhenAsked(t *testing.T) {
	empty := lookuptest.New(t)
	if n := len(empty.Demo()); n != 0 {
		t.Fatalf("a server without WithDemoData has %d demo events", n)
	}
	srv := lookuptest.New(t, lookuptest.WithDemoData())
	demo := srv.Demo()
	if len(demo) == 0 {
		t.Fatal("no demo events")
	}
	c, ok := demo[0].Data.(events.Consumer)
	if !ok {
		t.Fatalf("the first demo event is a %T, want a consumer", demo[0].Data)
	}
	res, err := srv.Client().GetPerson(t.Context(), c.ConsumerID)
	if err != nil || res.Person.FirstName != c.FirstName {
		t.Fatalf("demo consumer: %+v, %v", res, err)
	}
	if _, err := empty.Client().GetPerson(t.Context(), c.ConsumerID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("the empty server knows the demo consumer: %v", err)
	}
}
