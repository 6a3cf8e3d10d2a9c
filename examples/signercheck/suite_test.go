package signercheck_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/events"
	"github.com/lookup/persons/examples/signercheck"
	"github.com/lookup/persons/lookuptest"
)

const (
	business   = "b0000000-0000-4000-8000-000000000001"
	consumerID = "c0000000-0000-4000-8000-000000000001"
	guardianID = "50000000-0000-4000-8000-000000000001"
	formerID   = "50000000-0000-4000-8000-000000000002"
	unknownID  = "c0000000-0000-4000-8000-0000000000ff"
)

// service is lookupd as the suite needs it: in process or in containers.
type service interface {
	lookuptest.Lookupd
	// stale makes every read answer 503 stale, until the test ends.
	stale(t *testing.T)
}

func ev(t testing.TB, version uint64, data any) events.Event {
	t.Helper()
	e, err := events.NewEvent("signercheck-test", version, data)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func guardian(t testing.TB, version uint64, status events.SignerStatus) events.Event {
	return ev(t, version, events.Signer{SignerID: guardianID, ConsumerID: consumerID, FirstName: "Grace", LastName: "Hopper",
		HIPAAAuthorized: true, AccountAccess: events.AccountAccessPHI, Status: status, Type: events.SignerTypeGuardian,
		SSN: "123-45-6789", DateOfBirth: "1950-01-02"})
}

// fixtures are the consumer and two signers, seeded through the contract.
func fixtures(t testing.TB) []events.Event {
	return []events.Event{
		ev(t, 1, events.Consumer{ConsumerID: consumerID, BusinessID: business, FirstName: "Ada", LastName: "Lovelace"}),
		guardian(t, 1, events.SignerStatusActive),
		ev(t, 1, events.Signer{SignerID: formerID, ConsumerID: consumerID, FirstName: "Alan", LastName: "Turing",
			HIPAAAuthorized: true, AccountAccess: events.AccountAccessPHIAndAccountUpdates, Status: events.SignerStatusArchived,
			Type: events.SignerTypePowerOfAttorney, DateOfBirth: "1912-06-23"}),
	}
}

// checker returns a Checker whose client carries a token of opts and
// does not retry (the suite sees each 503 itself).
func checker(t *testing.T, svc service, opts ...lookuptest.TokenOption) signercheck.Checker {
	t.Helper()
	tok, err := svc.Token(opts...)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(svc.APIURL(), client.WithToken(tok), client.WithRetries(0), client.WithUserAgent("signercheck-test"))
	if err != nil {
		t.Fatal(err)
	}
	return signercheck.Checker{Lookup: c}
}

var grace = signercheck.Claimant{FirstName: "Grace", LastName: "Hopper", DateOfBirth: "1950-01-02"}

// runSuite runs the example's tests against svc.
func runSuite(t *testing.T, svc service) {
	if _, err := svc.Seed(t.Context(), fixtures(t)...); err != nil {
		t.Fatal(err)
	}
	ch := checker(t, svc)

	t.Run("decisions", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			consumer string
			c        signercheck.Claimant
			need     signercheck.Need
			allowed  bool
			reason   string
		}{
			{"guardian for PHI", consumerID, grace, signercheck.NeedPHI, true, "active guardian"},
			{"guardian for the account", consumerID, grace, signercheck.NeedAccount, false, "does not cover ACCOUNT"},
			{"another date of birth", consumerID, signercheck.Claimant{FirstName: "Grace", LastName: "Hopper", DateOfBirth: "1951-01-02"}, signercheck.NeedPHI, false, "no authorized signer matches"},
			{"an archived power of attorney", consumerID, signercheck.Claimant{FirstName: "alan", LastName: "TURING", DateOfBirth: "1912-06-23"}, signercheck.NeedPHI, false, "is archived"},
			{"an unknown consumer", unknownID, grace, signercheck.NeedPHI, false, "no authorized signers"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				d, err := ch.MayAct(t.Context(), tc.consumer, tc.c, tc.need, 0)
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed != tc.allowed || !strings.Contains(d.Reason, tc.reason) || d.Position == 0 {
					t.Fatalf("decision %+v, want allowed=%v with %q and a position", d, tc.allowed, tc.reason)
				}
			})
		}
	})

	t.Run("reads its own write", func(t *testing.T) {
		seq, err := svc.Publish(t.Context(), guardian(t, 2, events.SignerStatusInactive))
		if err != nil {
			t.Fatal(err)
		}
		// Right after the publish, with its sequence: no wait, no poll.
		d, err := ch.MayAct(t.Context(), consumerID, grace, signercheck.NeedPHI, seq)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed || !strings.Contains(d.Reason, "inactive") || d.Position < seq {
			t.Fatalf("decision %+v after the guardian was made inactive at %d", d, seq)
		}
		if _, err := svc.Seed(t.Context(), guardian(t, 3, events.SignerStatusActive)); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("problems", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			ch   signercheck.Checker
			call func(signercheck.Checker) error
			want error
		}{
			{"401: an expired token", checker(t, svc, lookuptest.Expired()), mayAct(t, 0), client.ErrUnauthorized},
			{"403: no scope", checker(t, svc, lookuptest.Scopes()), mayAct(t, 0), client.ErrInsufficientScope},
			{"404: no such consumer", ch, func(ch signercheck.Checker) error {
				_, err := ch.Lookup.AuthorizedSigners(t.Context(), unknownID)
				return err
			}, client.ErrNotFound},
			{"503: a position not reached", ch, mayAct(t, 1<<40), client.ErrPositionNotReached},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := tc.call(tc.ch)
				var p *client.Problem
				if !errors.Is(err, tc.want) || !errors.As(err, &p) {
					t.Fatalf("err = %v, want a *client.Problem matching %v", err, tc.want)
				}
			})
		}
	})

	t.Run("handler", func(t *testing.T) {
		srv := httptest.NewServer(ch.Handler())
		defer srv.Close()
		for _, tc := range []struct {
			name, query string
			status      int
			body        string
		}{
			{"allowed", "consumer_id=" + consumerID + "&first_name=Grace&last_name=Hopper&need=PHI", 200, `"allowed":true`},
			{"a malformed id, refused before calling lookupd", "consumer_id=42&first_name=Grace&last_name=Hopper&need=PHI", 400, "consumer_id"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/may-act?"+tc.query, nil)
				req.Header.Set("Claimant-Date-Of-Birth", "1950-01-02")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				if err != nil || resp.StatusCode != tc.status || !strings.Contains(string(body), tc.body) {
					t.Fatalf("%d %s (%v), want %d with %q", resp.StatusCode, body, err, tc.status, tc.body)
				}
			})
		}
	})

	// Last: it leaves the service stale.
	t.Run("503: stale", func(t *testing.T) {
		svc.stale(t)
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err := ch.MayAct(t.Context(), consumerID, grace, signercheck.NeedPHI, 0)
			if errors.Is(err, client.ErrStale) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("not stale after 30 s: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

func mayAct(t *testing.T, minPos uint64) func(signercheck.Checker) error {
	return func(ch signercheck.Checker) error {
		_, err := ch.MayAct(t.Context(), consumerID, grace, signercheck.NeedPHI, minPos)
		return err
	}
}
