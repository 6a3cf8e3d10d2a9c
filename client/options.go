package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// An Option configures a Client. New fails at once on an option that makes
// no sense, so a mistake shows at start-up rather than as a 401 later: an
// empty token, one that starts with "Bearer " or holds a character a
// bearer token cannot, more than one token option, a nil source, function
// or *http.Client, a retry count outside 0 to 100, a User-Agent that is
// empty or not printable ASCII. (New also refuses a base URL that is not
// http(s)://host[:port][/prefix], or that has a query, a fragment or a
// user.)
type Option func(*Client) error

// A Token is what a TokenSource gives: it sets the Authorization header of
// a request. *oauth2.Token is one.
type Token interface {
	SetAuthHeader(*http.Request)
}

// A TokenSource gives the token of each request. An oauth2.TokenSource is
// one (T is then *oauth2.Token), so the client refreshes its token the way
// the caller's OAuth 2.0 set-up does, with no dependency of this package
// on golang.org/x/oauth2. It is called once per request sent; cache in the
// source (oauth2.ReuseTokenSource does).
type TokenSource[T Token] interface {
	Token() (T, error)
}

// WithHTTPClient sends requests through hc (its Transport, Timeout and
// redirect policy) instead of http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("WithHTTPClient: nil *http.Client")
		}
		c.hc = hc
		return nil
	}
}

// WithToken sends the bearer token tok (the token itself, without "Bearer ")
// on every request. For a token that expires, use WithTokenSource.
func WithToken(tok string) Option {
	return func(c *Client) error {
		if err := checkToken(tok); err != nil {
			return fmt.Errorf("WithToken: %w", err)
		}
		return c.setAuth(func(context.Context) (string, error) { return "Bearer " + tok, nil })
	}
}

// WithTokenSource takes the token of each request from ts, for example an
// oauth2.TokenSource.
func WithTokenSource[T Token](ts TokenSource[T]) Option {
	return func(c *Client) error {
		if ts == nil {
			return errors.New("WithTokenSource: nil source")
		}
		return c.setAuth(func(context.Context) (string, error) {
			tok, err := ts.Token()
			if err != nil {
				return "", err
			}
			r := http.Request{Header: http.Header{}}
			tok.SetAuthHeader(&r)
			return r.Header.Get("Authorization"), nil
		})
	}
}

// WithTokenFunc takes the token of each request (without "Bearer ") from
// f, which is given the call's context.
func WithTokenFunc(f func(ctx context.Context) (string, error)) Option {
	return func(c *Client) error {
		if f == nil {
			return errors.New("WithTokenFunc: nil function")
		}
		return c.setAuth(func(ctx context.Context) (string, error) {
			tok, err := f(ctx)
			if err != nil {
				return "", err
			}
			if err := checkToken(tok); err != nil {
				return "", err
			}
			return "Bearer " + tok, nil
		})
	}
}

// WithRetries sets how many times a call is sent again after a failure
// that may pass: DefaultRetries unless set, 0 for never. The operations
// are GETs, safe to send again (a read of protected data sent twice is
// recorded twice in the disclosure ledger), so these are retried: a 503 (not-ready, stale,
// position-not-reached, audit-unavailable), a proxy's 502 or 504, and a
// transport error (a connection refused, reset or closed before the
// answer, a timeout). A retry waits the answer's Retry-After if it has
// one (none is made if that is longer than MaxRetryWait), else a backoff
// with jitter (RetryBackoff, doubling, at most MaxRetryBackoff); none is
// made that would outlast the call's context, and the last failure is
// returned instead. Never retried: a 4xx, a 500, a certificate refused, a
// name that does not resolve. Meta.Attempts and Problem.Attempts count
// the requests sent.
func WithRetries(n int) Option {
	return func(c *Client) error {
		if n < 0 || n > 100 {
			return fmt.Errorf("WithRetries: %d retries: want 0 to 100", n)
		}
		c.retries = n
		return nil
	}
}

// WithUserAgent sets the User-Agent of every request (DefaultUserAgent
// unless set): name your service, so the service's operators can.
func WithUserAgent(ua string) Option {
	return func(c *Client) error {
		if ua == "" || !visibleASCII(ua, true) {
			return fmt.Errorf("WithUserAgent: %q: want visible ASCII and spaces", ua)
		}
		c.userAgent = ua
		return nil
	}
}

func (c *Client) setAuth(f func(context.Context) (string, error)) error {
	if c.auth != nil {
		return errors.New("more than one token option: give exactly one of WithToken, WithTokenSource, WithTokenFunc")
	}
	c.auth = f
	return nil
}

// checkToken refuses a token that cannot be a bearer token: empty, with a
// "Bearer " prefix (it is added), or with characters RFC 6750's b64token
// lacks (a space, a newline). It never echoes the token.
func checkToken(tok string) error {
	switch {
	case tok == "":
		return errors.New("empty token")
	case strings.HasPrefix(strings.ToLower(tok), "bearer "):
		return errors.New(`the token starts with "Bearer ": give the token alone`)
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !isAlnum(c) && strings.IndexByte("-._~+/=", c) < 0 {
			return fmt.Errorf("the token holds a character a bearer token cannot (at byte %d)", i)
		}
	}
	return nil
}

// A CallOption sets a parameter or header of one call. A value the service
// would refuse is refused before anything is sent, with an error matching
// ErrInvalidParameters.
type CallOption func(*call) error

// ExpandValue is a value of the expand parameter.
type ExpandValue string

// ProtectedPersonalData asks for each signer's protected_personal_data.
const ProtectedPersonalData ExpandValue = "PROTECTED_PERSONAL_DATA"

// SSNMode is how much of an SSN an answer shows (ssn_mode).
type SSNMode string

// The SSN modes. SSNLast4 is the service's default; SSNFull needs the
// scope read:persons:ssn.
const (
	SSNLast4  SSNMode = "LAST4"  // "6789"
	SSNMasked SSNMode = "MASKED" // "***-**-6789"
	SSNFull   SSNMode = "FULL"   // "123-45-6789"
	SSNNone   SSNMode = "NONE"   // no SSN
)

// Expand asks AuthorizedSigners for more of each signer: today only
// ProtectedPersonalData.
func Expand(e ExpandValue) CallOption {
	return func(c *call) error {
		if e != ProtectedPersonalData {
			return invalid("expand", "must be PROTECTED_PERSONAL_DATA")
		}
		c.expand = e
		return nil
	}
}

// SSN sets the ssn_mode of AuthorizedSigners; it needs Expand.
func SSN(m SSNMode) CallOption {
	return func(c *call) error {
		switch m {
		case SSNLast4, SSNMasked, SSNFull, SSNNone:
			c.ssnMode = m
			return nil
		}
		return invalid("ssn_mode", "must be one of LAST4, MASKED, FULL, NONE")
	}
}

// MinPosition asks for an answer from a read model that has applied at
// least stream sequence seq (Lookup-Min-Position): the sequence your
// publish returned, to read your own write. The service waits for it (see
// MaxWait), then answers 503 position-not-reached, which is retried. A
// call whose context is cancelled or runs out meanwhile fails with an
// error matching ctx's error (the 503, if one came, joined to it).
func MinPosition(seq uint64) CallOption {
	return func(c *call) error {
		c.minPos = max(c.minPos, seq)
		return nil
	}
}

// MaxWait bounds how long the service waits for MinPosition (Prefer:
// wait=<seconds>, rounded up to whole seconds; 0 not to wait at all). The
// service's own bound (2 s by default) still applies.
func MaxWait(d time.Duration) CallOption {
	return func(c *call) error {
		if d < 0 {
			return invalid("Prefer", "the wait must not be negative")
		}
		c.prefer = "wait=" + strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
		return nil
	}
}

// Purpose states why the call is made (Lookup-Purpose): a code of at most
// 64 visible ASCII characters, recorded in the disclosure ledger.
func Purpose(code string) CallOption {
	return func(c *call) error {
		if code == "" || len(code) > 64 || !visibleASCII(code, false) {
			return invalid("Lookup-Purpose", "must be 1 to 64 visible ASCII characters")
		}
		c.purpose = code
		return nil
	}
}

// RequestID sets the call's X-Request-Id (at most 128 visible ASCII
// characters), to trace it across your systems; the service makes one
// otherwise. Retries of the call send the same id.
func RequestID(id string) CallOption {
	return func(c *call) error {
		if id == "" || len(id) > 128 || !visibleASCII(id, false) {
			return invalid("X-Request-Id", "must be 1 to 128 visible ASCII characters")
		}
		c.requestID = id
		return nil
	}
}

// ArgumentError is a call refused before anything was sent because the
// service would refuse it. It matches ErrInvalidParameters.
type ArgumentError struct {
	Name   string // the parameter or header
	Reason string
}

func (e *ArgumentError) Error() string {
	return "lookupd client: invalid " + e.Name + ": " + e.Reason + " (not sent)"
}

// Is makes errors.Is(err, ErrInvalidParameters) hold.
func (e *ArgumentError) Is(target error) bool { return target == ErrInvalidParameters }

func invalid(name, reason string) error { return &ArgumentError{Name: name, Reason: reason} }

func visibleASCII(s string, spaces bool) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x21 || c > 0x7e) && (!spaces || c != ' ') {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}

// canonicalUUID reports whether s is 8-4-4-4-12 hexadecimal digits, any
// case: the only ids the service accepts.
func canonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
				return false
			}
		}
	}
	return true
}
