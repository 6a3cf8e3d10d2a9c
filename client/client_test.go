package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lookup/persons/client"
)

const (
	personID   = "7f1c3b2a-9d4e-4f6a-8b1c-2d3e4f5a6b7c"
	consumerID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
)

// answer is one canned answer of a fake transport.
type answer struct {
	status  int
	header  map[string]string
	body    string
	onRecvd func(*http.Request)
}

// fakeTransport answers the requests it is sent with answers, in order
// (the last one repeats), and keeps the requests. It does no I/O, so
// tests that wait (retries) run in a synctest bubble.
type fakeTransport struct {
	answers []answer
	reqs    []*http.Request
}

func (f *fakeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	a := f.answers[min(len(f.reqs), len(f.answers)-1)]
	f.reqs = append(f.reqs, r)
	if a.onRecvd != nil {
		a.onRecvd(r)
	}
	h := http.Header{}
	for k, v := range a.header {
		h.Set(k, v)
	}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(strings.NewReader(a.body)), Request: r}, nil
}

func newClient(t *testing.T, f *fakeTransport, opts ...client.Option) *client.Client {
	t.Helper()
	opts = append([]client.Option{client.WithHTTPClient(&http.Client{Transport: f}), client.WithToken("tok.en-_~+/=")}, opts...)
	c, err := client.New("http://lookupd.test/prefix/", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const personJSON = `{"person_id":"` + personID + `","business_id":"9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d","first_name":"Ada","last_name":"Lovelace","type":"CONSUMER"}` + "\n"

func problemAnswer(status int, slug string, hdr map[string]string) answer {
	if hdr == nil {
		hdr = map[string]string{}
	}
	hdr["Content-Type"] = "application/problem+json"
	return answer{status: status, header: hdr,
		body: `{"type":"https://lookup.example/problems/` + slug + `","title":"T","status":` + strconv.Itoa(status) + `,"detail":"D ` + slug + `","instance":"/api/v1/persons/x"}`}
}

func TestGetPersonSendsAndReads(t *testing.T) {
	f := &fakeTransport{answers: []answer{{status: 200, body: personJSON, header: map[string]string{
		"Content-Type": "application/json", "X-Request-Id": "rid-1", "Lookup-Position": "42"}}}}
	c := newClient(t, f, client.WithUserAgent("onboarding/2.1"))
	res, err := c.GetPerson(t.Context(), personID, client.MinPosition(40), client.MaxWait(1500*time.Millisecond),
		client.Purpose("kyc"), client.RequestID("caller-rid"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Person.FirstName != "Ada" || res.Person.Type != client.Consumer || res.Meta.Position != 42 || res.Meta.RequestID != "rid-1" || res.Meta.Attempts != 1 {
		t.Fatalf("result = %+v", res)
	}
	r := f.reqs[0]
	for h, want := range map[string]string{
		"Authorization": "Bearer tok.en-_~+/=", "Accept": "application/json", "User-Agent": "onboarding/2.1",
		"Lookup-Min-Position": "40", "Prefer": "wait=2", "Lookup-Purpose": "kyc", "X-Request-Id": "caller-rid",
	} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	if got := r.URL.String(); got != "http://lookupd.test/prefix/api/v1/persons/"+personID {
		t.Errorf("URL = %s", got)
	}
}

func TestAuthorizedSignersQuery(t *testing.T) {
	f := &fakeTransport{answers: []answer{{status: 200, header: map[string]string{"Content-Type": "application/json"},
		body: `{"items":[{"first_name":"B","last_name":"C","hipaa_authorized":true,"account_access":"PHI","status":"ACTIVE","type":"GUARDIAN","protected_personal_data":{"social_security_number":"***-**-6789","date_of_birth":"1990-01-02"}}]}`}}}
	c := newClient(t, f)
	res, err := c.AuthorizedSigners(t.Context(), consumerID, client.Expand(client.ProtectedPersonalData), client.SSN(client.SSNMasked))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 || res.Items[0].Protected == nil || res.Items[0].Protected.SocialSecurityNumber != "***-**-6789" || !res.Items[0].HIPAAAuthorized {
		t.Fatalf("items = %+v", res.Items)
	}
	if got, want := f.reqs[0].URL.RawQuery, "consumer_id="+consumerID+"&expand=PROTECTED_PERSONAL_DATA&ssn_mode=MASKED"; got != want {
		t.Errorf("query = %q, want %q", got, want)
	}
	if h := f.reqs[0].Header.Get("Lookup-Min-Position"); h != "" {
		t.Errorf("Lookup-Min-Position = %q without MinPosition", h)
	}
}

func TestRefusedBeforeSending(t *testing.T) {
	for _, tc := range []struct {
		name, param string
		call        func(c *client.Client) error
	}{
		{"malformed person id", "person_id", func(c *client.Client) error {
			_, err := c.GetPerson(t.Context(), "7f1c3b2a9d4e4f6a8b1c2d3e4f5a6b7c")
			return err
		}},
		{"person id with a path", "person_id", func(c *client.Client) error {
			_, err := c.GetPerson(t.Context(), "../../admin/x-9d4e-4f6a-8b1c-2d3e4f5a6b7")
			return err
		}},
		{"malformed consumer id", "consumer_id", func(c *client.Client) error {
			_, err := c.AuthorizedSigners(t.Context(), consumerID+"&expand=PROTECTED_PERSONAL_DATA")
			return err
		}},
		{"ssn_mode without expand", "ssn_mode", func(c *client.Client) error {
			_, err := c.AuthorizedSigners(t.Context(), consumerID, client.SSN(client.SSNFull))
			return err
		}},
		{"unknown ssn mode", "ssn_mode", func(c *client.Client) error {
			_, err := c.AuthorizedSigners(t.Context(), consumerID, client.Expand(client.ProtectedPersonalData), client.SSN("ALL"))
			return err
		}},
		{"unknown expand", "expand", func(c *client.Client) error {
			_, err := c.AuthorizedSigners(t.Context(), consumerID, client.Expand("EVERYTHING"))
			return err
		}},
		{"expand on a person", "expand", func(c *client.Client) error {
			_, err := c.GetPerson(t.Context(), personID, client.Expand(client.ProtectedPersonalData))
			return err
		}},
		{"purpose with a space", "Lookup-Purpose", func(c *client.Client) error {
			_, err := c.GetPerson(t.Context(), personID, client.Purpose("know your customer"))
			return err
		}},
		{"request id too long", "X-Request-Id", func(c *client.Client) error {
			_, err := c.GetPerson(t.Context(), personID, client.RequestID(strings.Repeat("r", 129)))
			return err
		}},
		{"negative wait", "Prefer", func(c *client.Client) error {
			_, err := c.GetPerson(t.Context(), personID, client.MaxWait(-time.Second))
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTransport{answers: []answer{{status: 200, body: personJSON}}}
			err := tc.call(newClient(t, f))
			var ae *client.ArgumentError
			if !errors.As(err, &ae) || ae.Name != tc.param || !errors.Is(err, client.ErrInvalidParameters) {
				t.Fatalf("err = %v, want an ArgumentError for %s matching ErrInvalidParameters", err, tc.param)
			}
			if len(f.reqs) != 0 {
				t.Fatalf("%d requests sent", len(f.reqs))
			}
		})
	}
}

func TestNewRefusesWhatMakesNoSense(t *testing.T) {
	src := staticSource{&oauthLikeToken{"x"}}
	for _, tc := range []struct {
		name, base string
		opts       []client.Option
		want       string
	}{
		{"relative URL", "lookupd:8080", nil, "base URL"},
		{"URL with a query", "http://h/?a=b", nil, "base URL"},
		{"URL with a user", "http://u:p@h/", nil, "base URL"},
		{"ftp", "ftp://h/", nil, "base URL"},
		{"empty token", "http://h", []client.Option{client.WithToken("")}, "empty token"},
		{"Bearer prefix", "http://h", []client.Option{client.WithToken("Bearer abc")}, `starts with "Bearer "`},
		{"newline in token", "http://h", []client.Option{client.WithToken("abc\r\nX-Evil: 1")}, "cannot"},
		{"two token options", "http://h", []client.Option{client.WithToken("a"), client.WithTokenSource(src)}, "more than one token option"},
		{"nil token func", "http://h", []client.Option{client.WithTokenFunc(nil)}, "nil"},
		{"negative retries", "http://h", []client.Option{client.WithRetries(-1)}, "retries"},
		{"nil http client", "http://h", []client.Option{client.WithHTTPClient(nil)}, "nil"},
		{"user agent with a newline", "http://h", []client.Option{client.WithUserAgent("a\nb")}, "User"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.New(tc.base, tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, %v; want an error with %q", c, err, tc.want)
			}
			if strings.Contains(err.Error(), "X-Evil") || strings.Contains(err.Error(), "abc") {
				t.Fatalf("the error echoes the token: %v", err)
			}
		})
	}
}

func TestProblemsMatchSentinels(t *testing.T) {
	for _, tc := range []struct {
		status int
		slug   string
		want   error
	}{
		{400, "invalid-parameters", client.ErrInvalidParameters},
		{401, "unauthorized", client.ErrUnauthorized},
		{403, "insufficient-scope", client.ErrInsufficientScope},
		{403, "forbidden", client.ErrForbidden},
		{404, "not-found", client.ErrNotFound},
		{404, "route-not-found", client.ErrRouteNotFound},
		{500, "internal-error", client.ErrInternal},
		{503, "stale", client.ErrStale},
	} {
		t.Run(tc.slug, func(t *testing.T) {
			f := &fakeTransport{answers: []answer{problemAnswer(tc.status, tc.slug, map[string]string{"X-Request-Id": "rid", "Lookup-Position": "7"})}}
			_, err := newClient(t, f).GetPerson(t.Context(), personID)
			var p *client.Problem
			if !errors.As(err, &p) || !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want a *Problem matching %v", err, tc.want)
			}
			if p.Status != tc.status || p.RequestID != "rid" || p.Position != 7 || p.Detail != "D "+tc.slug {
				t.Fatalf("problem = %+v", p)
			}
			if errors.Is(err, client.ErrNotReady) {
				t.Fatal("matches another type too")
			}
		})
	}
}

func TestInvalidParamsAreRead(t *testing.T) {
	f := &fakeTransport{answers: []answer{{status: 400, header: map[string]string{"Content-Type": "application/problem+json"},
		body: `{"type":"https://lookup.example/problems/invalid-parameters","title":"Request validation failed","status":400,"detail":"d","instance":"/i","invalid_params":[{"name":"consumer_id","reason":"r"}]}`}}}
	_, err := newClient(t, f).AuthorizedSigners(t.Context(), consumerID)
	var p *client.Problem
	if !errors.As(err, &p) || len(p.InvalidParams) != 1 || p.InvalidParams[0].Name != "consumer_id" || !strings.Contains(err.Error(), "consumer_id: r") {
		t.Fatalf("err = %v", err)
	}
}

func TestNonProblemAnswerIsAnError(t *testing.T) {
	f := &fakeTransport{answers: []answer{{status: 502, header: map[string]string{"Content-Type": "text/html"}, body: "<html><body>Bad Gateway</body></html>"}}}
	_, err := newClient(t, f).GetPerson(t.Context(), personID)
	var p *client.Problem
	if !errors.As(err, &p) || p.Status != 502 || p.Type != "about:blank" || p.Title != "Bad Gateway" {
		t.Fatalf("err = %v (%+v)", err, p)
	}
	if errors.Is(err, client.ErrInternal) || errors.Is(err, client.ErrNotFound) {
		t.Fatal("a proxy's page matches a problem type")
	}
	if !strings.Contains(err.Error(), "502") {
		t.Fatalf("error %q lacks the status", err)
	}
}

func TestMalformedSuccessIsAnError(t *testing.T) {
	f := &fakeTransport{answers: []answer{{status: 200, body: "<html>"}}}
	if _, err := newClient(t, f).GetPerson(t.Context(), personID); err == nil || !strings.Contains(err.Error(), "decode") {
		t.Fatalf("err = %v", err)
	}
}

func TestRetries(t *testing.T) {
	notReached := problemAnswer(503, "position-not-reached", map[string]string{"Retry-After": "1", "Lookup-Position": "5"})
	ok := answer{status: 200, body: personJSON, header: map[string]string{"Lookup-Position": "9"}}
	for _, tc := range []struct {
		name         string
		answers      []answer
		retries      int
		timeout      time.Duration
		wantErr      error
		wantAttempts int
		wantWaited   time.Duration
	}{
		{"503 with Retry-After, then 200", []answer{notReached, ok}, 2, 0, nil, 2, time.Second},
		{"bounded", []answer{notReached}, 2, 0, client.ErrPositionNotReached, 3, 2 * time.Second},
		{"no retries", []answer{notReached, ok}, 0, 0, client.ErrPositionNotReached, 1, 0},
		{"a 500 without Retry-After is not retried", []answer{problemAnswer(500, "internal-error", nil), ok}, 2, 0, client.ErrInternal, 1, 0},
		{"a 500 is not retried", []answer{problemAnswer(500, "internal-error", map[string]string{"Retry-After": "1"}), ok}, 2, 0, client.ErrInternal, 1, 0},
		{"wait beyond the deadline", []answer{problemAnswer(503, "not-ready", map[string]string{"Retry-After": "5"}), ok}, 2, 2 * time.Second, client.ErrNotReady, 1, 0},
		{"wait beyond MaxRetryWait", []answer{problemAnswer(503, "not-ready", map[string]string{"Retry-After": "3600"}), ok}, 2, 0, client.ErrNotReady, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeTransport{answers: tc.answers}
				c := newClient(t, f, client.WithRetries(tc.retries))
				ctx := t.Context()
				if tc.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.timeout)
					defer cancel()
				}
				start := time.Now()
				res, err := c.GetPerson(ctx, personID, client.RequestID("same"))
				if waited := time.Since(start); waited != tc.wantWaited {
					t.Errorf("waited %v, want %v", waited, tc.wantWaited)
				}
				if len(f.reqs) != tc.wantAttempts {
					t.Errorf("%d requests, want %d", len(f.reqs), tc.wantAttempts)
				}
				for _, r := range f.reqs {
					if r.Header.Get("X-Request-Id") != "same" {
						t.Errorf("a retry changed the request id")
					}
				}
				if tc.wantErr == nil {
					if err != nil || res.Meta.Attempts != tc.wantAttempts || res.Meta.Position != 9 {
						t.Fatalf("res, err = %+v, %v", res, err)
					}
					return
				}
				var p *client.Problem
				if !errors.As(err, &p) || !errors.Is(err, tc.wantErr) || p.Attempts != tc.wantAttempts {
					t.Fatalf("err = %v (%+v), want %v after %d attempts", err, p, tc.wantErr, tc.wantAttempts)
				}
			})
		})
	}
}

func TestRetryStopsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		f := &fakeTransport{answers: []answer{problemAnswer(503, "stale", map[string]string{"Retry-After": "5"})}}
		c := newClient(t, f)
		done := make(chan error)
		go func() {
			_, err := c.GetPerson(ctx, personID)
			done <- err
		}()
		synctest.Wait() // the call is waiting to retry
		cancel()
		err := <-done
		var p *client.Problem
		if !errors.Is(err, context.Canceled) || !errors.Is(err, client.ErrStale) || !errors.As(err, &p) || len(f.reqs) != 1 {
			t.Fatalf("err = %v after %d requests, want context.Canceled with the 503 it cut short", err, len(f.reqs))
		}
	})
}

func TestSessionSendsTheHighestPositionSeen(t *testing.T) {
	f := &fakeTransport{answers: []answer{
		{status: 200, body: personJSON, header: map[string]string{"Lookup-Position": "12"}},
		{status: 200, body: personJSON, header: map[string]string{"Lookup-Position": "11"}},
	}}
	s := newClient(t, f).Session()
	s.Observe(10) // a publish returned 10
	if _, err := s.GetPerson(t.Context(), personID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetPerson(t.Context(), personID, client.MinPosition(3)); err != nil {
		t.Fatal(err)
	}
	s.Observe(4) // lower: no change
	if _, err := s.GetPerson(t.Context(), personID, client.MinPosition(20)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range f.reqs {
		got = append(got, r.Header.Get("Lookup-Min-Position"))
	}
	if strings.Join(got, ",") != "10,12,20" || s.Position() != 12 {
		t.Fatalf("sent %v, position %d; want 10,12,20 and 12", got, s.Position())
	}
}

// oauthLikeToken and staticSource have the shapes of *oauth2.Token and an
// oauth2.TokenSource, so that the test shows one satisfies TokenSource.
type oauthLikeToken struct{ AccessToken string }

func (t *oauthLikeToken) SetAuthHeader(r *http.Request) {
	r.Header.Set("Authorization", "Bearer "+t.AccessToken)
}

type oauthLikeSource interface {
	Token() (*oauthLikeToken, error)
}

type staticSource struct{ t *oauthLikeToken }

func (s staticSource) Token() (*oauthLikeToken, error) { return s.t, nil }

type countingSource struct{ n atomic.Int32 }

func (s *countingSource) Token() (*oauthLikeToken, error) {
	return &oauthLikeToken{AccessToken: "t" + strconv.Itoa(int(s.n.Add(1)))}, nil
}

func TestTokenSourceIsAskedPerRequest(t *testing.T) {
	src := &countingSource{}
	var ts oauthLikeSource = src // as an oauth2.TokenSource is held
	f := &fakeTransport{answers: []answer{{status: 200, body: personJSON}}}
	c, err := client.New("http://h", client.WithHTTPClient(&http.Client{Transport: f}), client.WithTokenSource(ts))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.GetPerson(t.Context(), personID); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := f.reqs[0].Header.Get("Authorization"), f.reqs[1].Header.Get("Authorization"); a != "Bearer t1" || b != "Bearer t2" {
		t.Fatalf("Authorization = %q, %q", a, b)
	}
}

func TestTokenFuncErrorIsNotSent(t *testing.T) {
	f := &fakeTransport{answers: []answer{{status: 200, body: personJSON}}}
	c, err := client.New("http://h", client.WithHTTPClient(&http.Client{Transport: f}),
		client.WithTokenFunc(func(context.Context) (string, error) { return "", errors.New("idp down") }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetPerson(t.Context(), personID); err == nil || !strings.Contains(err.Error(), "idp down") || len(f.reqs) != 0 {
		t.Fatalf("err = %v, %d requests", err, len(f.reqs))
	}
}
