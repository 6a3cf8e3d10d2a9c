package lookuptest

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lookup/persons/internal/ledger"
)

// An Option configures a Server. One that makes no sense (a negative
// bound, an empty claim) makes New fail the test at once.
type Option func(*config) error

type config struct {
	stream           string
	issuer, audience string
	tenantClaim      string
	maxStaleness     time.Duration
	maxPositionWait  time.Duration
	refresh          time.Duration
	audit            ledger.Mode
	demo             bool
	logger           *slog.Logger
}

func defaults() config {
	return config{
		stream: "PERSONS", issuer: DefaultIssuer, audience: DefaultAudience,
		// The stream's state is read often, so that stale shows soon
		// after the bound (lookupd reads it every 2 s).
		refresh:         100 * time.Millisecond,
		maxPositionWait: 2 * time.Second,
		audit:           ledger.Required,
		logger:          slog.New(slog.DiscardHandler),
	}
}

// WithTenancy turns tenancy on, as LOOKUP_TENANT_CLAIM does: tokens must
// carry claim (for example "business_ids") listing the business ids they
// may read (Tenants), and a person of another business is a 403
// forbidden.
func WithTenancy(claim string) Option {
	return func(c *config) error {
		if claim == "" {
			return errors.New("WithTenancy: empty claim name")
		}
		c.tenantClaim = claim
		return nil
	}
}

// WithMaxStaleness sets the staleness bound, as LOOKUP_MAX_STALENESS
// does: once the oldest event the read model has not applied is older
// than d (see PauseEvents), every read answers 503 stale. No bound by
// default.
func WithMaxStaleness(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("WithMaxStaleness(%v): want a positive bound", d)
		}
		c.maxStaleness = d
		return nil
	}
}

// WithMaxPositionWait bounds how long a read with Lookup-Min-Position
// waits (LOOKUP_MAX_POSITION_WAIT; 2 s by default).
func WithMaxPositionWait(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("WithMaxPositionWait(%v): want a positive wait", d)
		}
		c.maxPositionWait = d
		return nil
	}
}

// WithAudit sets the audit ledger's mode, as LOOKUP_AUDIT does and as
// lookupdcontainer.WithAudit does: "required" (the default, as lookupd
// serve's: an answer with protected data is sent only once its record is
// stored, in an audit stream on the server's NATS), "best-effort" or
// "off".
func WithAudit(mode string) Option {
	return func(c *config) error {
		m, err := ledger.ParseMode(mode)
		if err != nil {
			return fmt.Errorf("WithAudit(%q): want required, best-effort or off", mode)
		}
		c.audit = m
		return nil
	}
}

// WithDemoData publishes the demo data set of lookupd dev (three
// businesses, their consumers, contacts and signers) before the server
// starts; Demo returns its events. A server has no data otherwise.
func WithDemoData() Option {
	return func(c *config) error { c.demo = true; return nil }
}

// WithIssuer and WithAudience set the iss and aud the server requires
// (DefaultIssuer and DefaultAudience otherwise).
func WithIssuer(iss string) Option {
	return func(c *config) error {
		if iss == "" {
			return errors.New("WithIssuer: empty issuer")
		}
		c.issuer = iss
		return nil
	}
}

// WithAudience: see WithIssuer.
func WithAudience(aud string) Option {
	return func(c *config) error {
		if aud == "" {
			return errors.New("WithAudience: empty audience")
		}
		c.audience = aud
		return nil
	}
}

// WithLogger sends the server's logs (never personal data) to l; they are
// discarded otherwise.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return errors.New("WithLogger: nil logger")
		}
		c.logger = l
		return nil
	}
}
