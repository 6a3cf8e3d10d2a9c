package lookupdcontainer

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/testcontainers/testcontainers-go"
)

// An Option configures the service Run starts. It is a
// testcontainers.ContainerCustomizer, so it goes in the same list as
// testcontainers' own options (WithEnv, WithLogConsumers, ...), which
// customise the lookupd container.
type Option func(*options) error

// Customize does nothing to the request: Run reads the options itself.
func (o Option) Customize(*testcontainers.GenericContainerRequest) error { return nil }

type options struct {
	natsImage        string
	stream           string
	issuer, audience string
	tenantClaim      string
	env              map[string]string
}

func defaultOptions() options {
	return options{natsImage: DefaultNATSImage, stream: "PERSONS", issuer: "https://issuer.lookupdcontainer.invalid/",
		audience: "lookupd", env: map[string]string{}}
}

// WithNATSImage runs the NATS server from img (DefaultNATSImage
// otherwise): any nats-server image of version 2.11 or later, run with
// --jetstream.
func WithNATSImage(img string) Option {
	return func(o *options) error {
		if img == "" {
			return errors.New("WithNATSImage: empty image")
		}
		o.natsImage = img
		return nil
	}
}

// WithTenancy turns tenancy on (LOOKUP_TENANT_CLAIM=claim): tokens must
// list the business ids they may read in claim (lookuptest.Tenants).
func WithTenancy(claim string) Option {
	return func(o *options) error {
		if claim == "" {
			return errors.New("WithTenancy: empty claim name")
		}
		o.tenantClaim = claim
		o.env["LOOKUP_TENANT_CLAIM"] = claim
		return nil
	}
}

// WithMaxStaleness sets the staleness bound (LOOKUP_MAX_STALENESS).
func WithMaxStaleness(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("WithMaxStaleness(%v): want a positive bound", d)
		}
		o.env["LOOKUP_MAX_STALENESS"] = d.String()
		return nil
	}
}

// WithAudit sets the audit ledger's mode (LOOKUP_AUDIT): "required" (the
// service's default: an answer with protected data waits for its record),
// "best-effort" or "off".
func WithAudit(mode string) Option {
	return func(o *options) error {
		switch mode {
		case "required", "best-effort", "off":
			o.env["LOOKUP_AUDIT"] = mode
			return nil
		}
		return fmt.Errorf("WithAudit(%s): want required, best-effort or off", strconv.Quote(mode))
	}
}

// WithIssuer and WithAudience set the iss and aud lookupd requires
// (LOOKUP_ISSUER, LOOKUP_AUDIENCE); Token mints for them.
func WithIssuer(iss string) Option {
	return func(o *options) error {
		if iss == "" {
			return errors.New("WithIssuer: empty issuer")
		}
		o.issuer = iss
		return nil
	}
}

// WithAudience: see WithIssuer.
func WithAudience(aud string) Option {
	return func(o *options) error {
		if aud == "" {
			return errors.New("WithAudience: empty audience")
		}
		o.audience = aud
		return nil
	}
}
