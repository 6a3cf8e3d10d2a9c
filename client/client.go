// Package client is the Go client of the Person and Authorized Signer
// Lookup service (lookupd), for the services that call its HTTP API. It
// uses the standard library alone, so importing it brings in nothing else.
//
// What it adds to a plain HTTP call:
//   - the spec's types (Person, AuthorizedSigner), and each answer's
//     position and request id (Meta);
//   - every non-2xx answer as a *Problem, which errors.Is matches against
//     one sentinel per problem type (ErrNotFound, ErrStale, ...);
//   - a bounded retry of what may pass (a 503, a proxy's 502 or 504, a
//     connection refused or reset), after the Retry-After the answer asks
//     for or a backoff with jitter, never past the call's context; the
//     operations are GETs, safe to send again;
//   - a call whose context is cancelled or runs out fails with an error
//     that matches ctx's error (context.Canceled), even when the service's
//     503 came first: a caller's own cancel does not read as an outage;
//   - read-your-writes across services: MinPosition sends the stream
//     sequence your publish returned, and a Session remembers the highest
//     position it has seen and sends it on its next read;
//   - arguments the service would refuse (a malformed id, ssn_mode without
//     expand) refused before anything is sent.
//
// A Client is safe for concurrent use; make one per base URL and reuse it.
package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of a Client.
const (
	DefaultRetries   = 2
	DefaultUserAgent = "lookupd-client-go/1"
	// MaxRetryWait is the longest Retry-After a retry waits for; a longer
	// one ends the call with the answer's *Problem.
	MaxRetryWait = 10 * time.Second
	// RetryBackoff and MaxRetryBackoff bound the wait before a retry of
	// a failure without Retry-After (a transport error, a 502, 503 or
	// 504 without it): RetryBackoff before the first, doubled for each
	// one after, at most MaxRetryBackoff, less a random part of up to
	// half (jitter).
	RetryBackoff    = 100 * time.Millisecond
	MaxRetryBackoff = 2 * time.Second
)

// Client calls one lookupd API.
type Client struct {
	base      string // scheme://host[/prefix], no trailing slash
	hc        *http.Client
	auth      func(context.Context) (string, error) // the Authorization value; nil: none sent
	retries   int
	userAgent string
}

// New returns a Client of the API at baseURL (for example
// "https://lookup.internal.example"; a path prefix is kept). Without a
// token option no Authorization is sent, and the service answers 401.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("lookupd client: base URL %q: want http(s)://host[:port][/prefix] without query, fragment or user", baseURL)
	}
	c := &Client{
		base:      strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"),
		hc:        http.DefaultClient,
		retries:   DefaultRetries,
		userAgent: DefaultUserAgent,
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, fmt.Errorf("lookupd client: %w", err)
		}
	}
	return c, nil
}

// call is one call's parameters.
type call struct {
	expand    ExpandValue
	ssnMode   SSNMode
	minPos    uint64
	prefer    string
	purpose   string
	requestID string
}

// GetPerson returns the consumer or business contact with id. A person
// that does not exist is a *Problem matching ErrNotFound.
func (c *Client) GetPerson(ctx context.Context, id string, opts ...CallOption) (*PersonResult, error) {
	return c.getPerson(ctx, id, nil, opts)
}

// AuthorizedSigners returns every signer of the consumer consumerID. A
// consumer that does not exist or has no signers is a *Problem matching
// ErrNotFound.
func (c *Client) AuthorizedSigners(ctx context.Context, consumerID string, opts ...CallOption) (*SignersResult, error) {
	return c.authorizedSigners(ctx, consumerID, nil, opts)
}

func (c *Client) getPerson(ctx context.Context, id string, s *Session, opts []CallOption) (*PersonResult, error) {
	var k call
	if err := k.apply(opts); err != nil {
		return nil, err
	}
	if !canonicalUUID(id) {
		return nil, invalid("person_id", "must be a canonical UUID (8-4-4-4-12 hexadecimal digits)")
	}
	if k.expand != "" || k.ssnMode != "" {
		return nil, invalid("expand", "Get Person takes no expand or ssn_mode")
	}
	res := &PersonResult{}
	meta, err := c.do(ctx, "/api/v1/persons/"+id, &k, s, &res.Person)
	res.Meta = meta
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (c *Client) authorizedSigners(ctx context.Context, consumerID string, s *Session, opts []CallOption) (*SignersResult, error) {
	var k call
	if err := k.apply(opts); err != nil {
		return nil, err
	}
	if !canonicalUUID(consumerID) {
		return nil, invalid("consumer_id", "must be a canonical UUID (8-4-4-4-12 hexadecimal digits)")
	}
	if k.ssnMode != "" && k.expand == "" {
		return nil, invalid("ssn_mode", "is only allowed with expand")
	}
	path := "/api/v1/authorized-signers?consumer_id=" + consumerID
	if k.expand != "" {
		path += "&expand=" + string(k.expand)
	}
	if k.ssnMode != "" {
		path += "&ssn_mode=" + string(k.ssnMode)
	}
	var body struct {
		Items []AuthorizedSigner `json:"items"`
	}
	meta, err := c.do(ctx, path, &k, s, &body)
	if err != nil {
		return nil, err
	}
	return &SignersResult{Items: body.Items, Meta: meta}, nil
}

func (k *call) apply(opts []CallOption) error {
	for _, o := range opts {
		if err := o(k); err != nil {
			return err
		}
	}
	return nil
}

// do sends GET path until an answer that is not retried, and decodes a
// 2xx answer's JSON into out. With a session, it sends the session's
// position as the least Lookup-Min-Position and raises it with the
// answer's. If ctx is done when the call fails, the error matches ctx's
// (context.Canceled, context.DeadlineExceeded) as well as the last
// attempt's failure.
func (c *Client) do(ctx context.Context, path string, k *call, s *Session, out any) (Meta, error) {
	var meta Meta
	for {
		meta.Attempts++
		p, transient, err := c.attempt(ctx, path, k, s, out, &meta)
		if p == nil && err == nil {
			return meta, nil
		}
		failure := err
		if p != nil {
			failure = p
		}
		if ctx.Err() != nil {
			return meta, ctxError(ctx, path, failure)
		}
		wait, ok := c.retryWait(ctx, p, transient, meta.Attempts)
		if !ok {
			if err != nil && transient && meta.Attempts > 1 {
				return meta, fmt.Errorf("%w (%d attempts)", err, meta.Attempts)
			}
			return meta, failure
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return meta, ctxError(ctx, path, failure)
		}
	}
}

// ctxError is the error of a call that failed with failure while, or
// after, ctx was done: it matches ctx's error and failure both, so that a
// caller's own cancel does not read as the service's 503.
func ctxError(ctx context.Context, path string, failure error) error {
	if errors.Is(failure, ctx.Err()) { // a transport error of the cancel itself
		return failure
	}
	return fmt.Errorf("lookupd client: GET %s: %w (the last attempt: %w)", strings.SplitN(path, "?", 2)[0], ctx.Err(), failure)
}

// attempt sends one request of a call: it returns the *Problem of a
// non-2xx answer, nil having decoded a 2xx one into out, or the error
// that kept it from an answer, with whether that error is a transport's
// that a retry may not meet (see transient). It sets meta from the
// answer's headers.
func (c *Client) attempt(ctx context.Context, path string, k *call, s *Session, out any, meta *Meta) (*Problem, bool, error) {
	req, err := c.request(ctx, path, k, s)
	if err != nil {
		return nil, false, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, transient(err), fmt.Errorf("lookupd client: GET %s: %w", req.URL.Path, err)
	}
	defer func() { // what is left read (bounded) so that the connection is reused
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		_ = resp.Body.Close()
	}()
	meta.RequestID = resp.Header.Get("X-Request-Id")
	meta.Position, _ = strconv.ParseUint(resp.Header.Get("Lookup-Position"), 10, 64)
	if s != nil {
		s.Observe(meta.Position)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return nil, false, fmt.Errorf("lookupd client: GET %s: %d answer: decode: %w", req.URL.Path, resp.StatusCode, err)
		}
		return nil, false, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxProblemBody))
	return problemOf(resp, body, *meta), false, nil
}

// transient reports whether err, of http.Client.Do, is the network's and
// may pass: a connection refused, reset or aborted, a broken pipe, EOF
// before the answer, a timeout. A certificate refused or a name that does
// not resolve is not: a retry would meet it again.
func transient(err error) bool {
	var cert *tls.CertificateVerificationError
	if errors.As(err, &cert) {
		return false
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsTimeout || dns.IsTemporary
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// request builds one attempt of a call.
func (c *Client) request(ctx context.Context, path string, k *call, s *Session) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("lookupd client: %w", err)
	}
	h := req.Header
	h["Accept"] = []string{"application/json"}
	h["User-Agent"] = []string{c.userAgent}
	if c.auth != nil {
		v, err := c.auth(ctx)
		if err != nil {
			return nil, fmt.Errorf("lookupd client: token: %w", err)
		}
		h["Authorization"] = []string{v}
	}
	minPos := k.minPos
	if s != nil {
		minPos = max(minPos, s.Position())
	}
	if minPos > 0 {
		h["Lookup-Min-Position"] = []string{strconv.FormatUint(minPos, 10)}
	}
	if k.prefer != "" {
		h["Prefer"] = []string{k.prefer}
	}
	if k.purpose != "" {
		h["Lookup-Purpose"] = []string{k.purpose}
	}
	if k.requestID != "" {
		h["X-Request-Id"] = []string{k.requestID}
	}
	return req, nil
}

// retryWait says whether the call is sent again after its attempts-th
// attempt failed with p (an answer) or with a transient transport error,
// and after how long: within the retries, for a transport error, a 502, a
// 503 or a 504; the answer's Retry-After if it has one (at most
// MaxRetryWait, else no retry), a backoff otherwise; and only if the wait
// ends before ctx's deadline.
func (c *Client) retryWait(ctx context.Context, p *Problem, transient bool, attempts int) (time.Duration, bool) {
	if attempts > c.retries {
		return 0, false
	}
	var wait time.Duration
	switch {
	case p == nil && transient:
		wait = backoff(attempts)
	case p == nil:
		return 0, false
	case p.Status != http.StatusBadGateway && p.Status != http.StatusServiceUnavailable && p.Status != http.StatusGatewayTimeout:
		return 0, false
	case p.RetryAfter > MaxRetryWait:
		return 0, false
	case p.RetryAfter > 0:
		wait = p.RetryAfter
	default:
		wait = backoff(attempts)
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		return 0, false
	}
	return wait, true
}

// backoff is the wait before retry n (from 1) of a failure that says
// nothing of when to retry: RetryBackoff doubled for each retry before it,
// at most MaxRetryBackoff, of which a random half is taken off (jitter),
// so that callers that failed together do not come back together.
func backoff(n int) time.Duration {
	d := MaxRetryBackoff
	if n < 16 {
		d = min(d, RetryBackoff<<(n-1))
	}
	return d/2 + rand.N(d/2+1) //nolint:gosec // G404: jitter of a retry's wait, not a secret
}
