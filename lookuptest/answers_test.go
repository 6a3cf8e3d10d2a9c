package lookuptest_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/events"
	"github.com/lookup/persons/lookuptest"
)

func TestFailNextAndSetError(t *testing.T) {
	srv := lookuptest.New(t)
	ctx := t.Context()
	if _, err := srv.Seed(ctx, consumer(t, 1, "Ada")); err != nil {
		t.Fatal(err)
	}
	c := srv.Client(client.WithRetries(0))

	srv.FailNext(1, client.ErrNotReady)
	srv.FailNext(1, client.ErrInternal)
	_, err := c.GetPerson(ctx, consumerID, client.RequestID("first"))
	var p *client.Problem
	if !errors.Is(err, client.ErrNotReady) || !errors.As(err, &p) || p.Status != 503 || p.RetryAfter != 5*time.Second ||
		p.RequestID != "first" || p.Instance != "/api/v1/persons/"+consumerID || p.Title != "Service not ready" {
		t.Fatalf("first: err = %v (%+v), want the service's 503 not-ready", err, p)
	}
	// A 500 is not retried, even by a client that retries.
	if _, err := srv.Client().GetPerson(ctx, consumerID); !errors.Is(err, client.ErrInternal) || !errors.As(err, &p) || p.Attempts != 1 {
		t.Fatalf("second: err = %v, want a 500 internal-error", err)
	}
	if res, err := c.GetPerson(ctx, consumerID); err != nil || res.Person.FirstName != "Ada" {
		t.Fatalf("third: %+v, %v; want the service's answer", res, err)
	}

	srv.SetError(client.ErrAuditUnavailable)
	for range 2 {
		if _, err := c.AuthorizedSigners(ctx, consumerID); !errors.Is(err, client.ErrAuditUnavailable) {
			t.Fatalf("with SetError: err = %v", err)
		}
	}
	srv.FailNext(3, client.ErrStale)
	srv.SetError("")
	if res, err := c.GetPerson(ctx, consumerID); err != nil || res.Person.FirstName != "Ada" {
		t.Fatalf("after SetError(\"\"): %+v, %v", res, err)
	}
	// Only the API's operations are answered so.
	srv.SetError(client.ErrInternal)
	resp, err := http.Get(srv.APIURL() + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.SetError("")
	if resp.StatusCode != 200 {
		t.Fatalf("/openapi.yaml with SetError: %d", resp.StatusCode)
	}

	reqs, err := srv.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	var injected []bool
	for _, r := range reqs {
		got = append(got, r.Status)
		injected = append(injected, r.Injected)
	}
	if want := []int{503, 500, 200, 503, 503, 200, 200}; !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	if want := []bool{true, true, false, true, true, false, false}; !slices.Equal(injected, want) {
		t.Fatalf("injected %v, want %v", injected, want)
	}
	if r := reqs[0]; r.Method != "GET" || r.Path != "/api/v1/persons/"+consumerID || r.RequestID != "first" {
		t.Fatalf("first request %+v", r)
	}
	if r := reqs[3]; r.Path != "/api/v1/authorized-signers" || r.Query != "consumer_id="+consumerID || r.RequestID == "" {
		t.Fatalf("fourth request %+v", r)
	}
	srv.ClearRequests()
	if reqs, _ := srv.Requests(ctx); len(reqs) != 0 {
		t.Fatalf("%d requests after ClearRequests", len(reqs))
	}
}

// TestInjectedAsTheServiceAnswers: an injected position-not-reached is the
// service's own, byte for byte, with the same headers.
func TestInjectedAsTheServiceAnswers(t *testing.T) {
	srv := lookuptest.New(t, lookuptest.WithMaxPositionWait(10*time.Millisecond))
	ctx := t.Context()
	if _, err := srv.Seed(ctx, consumer(t, 1, "Ada")); err != nil {
		t.Fatal(err)
	}
	srv.PauseEvents()
	seq, err := srv.Publish(ctx, consumer(t, 2, "Augusta"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := srv.Token()
	if err != nil {
		t.Fatal(err)
	}
	get := func(minPos uint64) (http.Header, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.APIURL()+"/api/v1/persons/"+consumerID, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("X-Request-Id", "rid")
		if minPos > 0 {
			req.Header.Set("Lookup-Min-Position", "99")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		resp.Header.Del("Date")
		return resp.Header, resp.Status + " " + string(b)
	}
	realHeader, realBody := get(seq + 10)
	srv.FailNext(1, client.ErrPositionNotReached)
	fakeHeader, fake := get(0)
	if realBody != fake {
		t.Fatalf("the service answered\n%s\nthe injected answer is\n%s", realBody, fake)
	}
	if a, b := slices.Sorted(maps.Keys(realHeader)), slices.Sorted(maps.Keys(fakeHeader)); !slices.Equal(a, b) {
		t.Fatalf("the service's headers %v, the injected answer's %v", a, b)
	}
	for _, k := range []string{"Content-Type", "Retry-After", "X-Request-Id", "Lookup-Position", "Cache-Control"} {
		if realHeader.Get(k) != fakeHeader.Get(k) {
			t.Errorf("%s: the service's %q, the injected answer's %q", k, realHeader.Get(k), fakeHeader.Get(k))
		}
	}
}

func TestRequestsShowTheLedgerRecords(t *testing.T) {
	srv := lookuptest.New(t)
	ctx := t.Context()
	if _, err := srv.Seed(ctx, consumer(t, 1, "Ada"), signer(t)); err != nil {
		t.Fatal(err)
	}
	c := srv.Client()
	if _, err := c.GetPerson(ctx, consumerID, client.RequestID("plain")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AuthorizedSigners(ctx, consumerID, client.Expand(client.ProtectedPersonalData), client.SSN(client.SSNMasked),
		client.Purpose("kyc"), client.RequestID("audited")); err != nil {
		t.Fatal(err)
	}
	reqs, err := srv.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].RequestID != "plain" || len(reqs[0].Audit) != 0 {
		t.Fatalf("requests %+v", reqs)
	}
	r := reqs[1]
	if r.RequestID != "audited" || r.Status != 200 || len(r.Audit) != 1 {
		t.Fatalf("the audited request: %+v", r)
	}
	if a := r.Audit[0]; a.PersonID != signerID || a.Operation != "getAuthorizedSigners" || a.SSNMode != "MASKED" ||
		!a.DOBDisclosed || a.Purpose != "kyc" || a.Subject != lookuptest.DefaultSubject || a.Time.IsZero() {
		t.Fatalf("its record: %+v", a)
	}
}

// TestRequestsShowARecordPerSigner: the ledger stores an answer of two
// signers as one record listing both (format 3); Requests shows an
// AuditRecord for each, with what was disclosed of each.
func TestRequestsShowARecordPerSigner(t *testing.T) {
	srv := lookuptest.New(t)
	ctx := t.Context()
	const second = "50000000-0000-4000-8000-000000000002"
	other := event(t, 1, events.Signer{SignerID: second, ConsumerID: consumerID, FirstName: "Alan", LastName: "Turing",
		HIPAAAuthorized: true, AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusActive,
		Type: events.SignerTypeGuardian, SSN: "987-65-4321"})
	if _, err := srv.Seed(ctx, consumer(t, 1, "Ada"), signer(t), other); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client().AuthorizedSigners(ctx, consumerID, client.Expand(client.ProtectedPersonalData),
		client.SSN(client.SSNLast4), client.RequestID("two")); err != nil {
		t.Fatal(err)
	}
	reqs, err := srv.Requests(ctx)
	if err != nil || len(reqs) != 1 {
		t.Fatalf("requests %+v, %v", reqs, err)
	}
	got := map[string]lookuptest.AuditRecord{}
	for _, a := range reqs[0].Audit {
		got[a.PersonID] = a
	}
	if len(reqs[0].Audit) != 2 || !got[signerID].DOBDisclosed || got[second].DOBDisclosed ||
		got[signerID].SSNMode != "LAST4" || got[second].SSNMode != "LAST4" || got[second].Time != got[signerID].Time {
		t.Fatalf("the records of the answer of two signers: %+v", reqs[0].Audit)
	}
}

func TestOffAuditHasNoRecords(t *testing.T) {
	srv := lookuptest.New(t, lookuptest.WithAudit("off"))
	if _, err := srv.Seed(t.Context(), consumer(t, 1, "Ada"), signer(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client().AuthorizedSigners(t.Context(), consumerID, client.Expand(client.ProtectedPersonalData)); err != nil {
		t.Fatal(err)
	}
	reqs, err := srv.Requests(t.Context())
	if err != nil || len(reqs) != 1 || len(reqs[0].Audit) != 0 {
		t.Fatalf("requests %+v, %v", reqs, err)
	}
}

func TestOnlyServiceFailuresInject(t *testing.T) {
	srv := lookuptest.New(t)
	defer func() {
		if recover() == nil {
			t.Fatal("SetError(client.ErrNotFound) did not panic")
		}
	}()
	srv.SetError(client.ErrNotFound)
}

// TestCancelDuringThePositionWait: a caller that gives up while its read
// waits for a position gets its own cancel back, not the service's 503.
func TestCancelDuringThePositionWait(t *testing.T) {
	srv := lookuptest.New(t, lookuptest.WithMaxPositionWait(50*time.Millisecond))
	srv.PauseEvents()
	seq, err := srv.Publish(t.Context(), consumer(t, 1, "Ada"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel) // while the retry waits the 503's Retry-After: 1 s
	_, err = srv.Client().GetPerson(ctx, consumerID, client.MinPosition(seq))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one matching context.Canceled", err)
	}
	srv.ResumeEvents()
}
