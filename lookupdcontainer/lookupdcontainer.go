// Package lookupdcontainer runs the Person and Authorized Signer Lookup
// service in containers, for the integration suites of the services that
// call it: the released lookupd image and a NATS JetStream server on a
// Docker network of their own, with a JWKS for a key the test makes.
//
// It is a module of its own (github.com/lookup/persons/lookupdcontainer),
// so that callers of the client or of the in-process test server
// (lookuptest) do not inherit testcontainers' dependencies. It follows the
// conventions of the testcontainers-go modules:
//
//	ctr, err := lookupdcontainer.Run(ctx, lookupdcontainer.DefaultImage(),
//		lookupdcontainer.WithTenancy("business_ids"))
//	testcontainers.CleanupContainer(t, ctr) // terminates what Run started, even on error
//	if err != nil {
//		t.Fatal(err)
//	}
//	seq, err := ctr.Seed(ctx, fixtures...)
//	tok, err := ctr.Token(lookuptest.Tenants(businessID))
//	c, err := client.New(ctr.APIURL(), client.WithToken(tok))
//
// A *Container offers the methods of the in-process server
// (lookuptest.Lookupd: Publish, Seed, Upsert, Delete, WaitForPosition,
// Token), so a suite can run the same tests against both.
package lookupdcontainer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/lookuptest"
)

// Images. `make images` in the service's repository builds both, tagging
// lookupd with `git describe` and "dev" (docs/calling.md says how to push
// them to a registry of one's own).
const (
	// ImageRepository is the repository of the lookupd image.
	ImageRepository = "lookup/lookupd"
	// DefaultNATSImage is the NATS server `make images` builds, at the
	// version the service is tested with.
	DefaultNATSImage = "lookup/nats-server:v2.15.2"
)

// modulePath is this module's path, looked up in the build information.
const modulePath = "github.com/lookup/persons/lookupdcontainer"

// DefaultImage is the lookupd image of this module's own version
// (lookup/lookupd:v1.2.3 for module version v1.2.3), so that a caller's
// suite tests the service it pinned. Built from a checkout (a replace
// directive, no version), it is lookup/lookupd:dev, which `make images`
// builds.
func DefaultImage() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
			if m.Path == modulePath && m.Replace == nil && m.Version != "" && m.Version != "(devel)" {
				return ImageRepository + ":" + m.Version
			}
		}
	}
	return ImageRepository + ":dev"
}

// Container is lookupd running in a container, beside its NATS server.
// The embedded Container is lookupd's; Terminate stops both and removes
// their network.
type Container struct {
	testcontainers.Container
	// NATS is the NATS server's container.
	NATS testcontainers.Container

	network  *testcontainers.DockerNetwork
	key      *lookuptest.Key
	policy   lookuptest.TokenPolicy
	apiURL   string
	adminURL string
	natsURL  string
	nc       *nats.Conn
	pub      *events.Publisher
	versions lookuptest.Versions // the entities' versions (Upsert, Delete)
}

var _ lookuptest.Lookupd = (*Container)(nil)

// Run starts NATS (with the source stream created) and then lookupd
// serve from img, both on a new network, and returns once lookupd's
// /readyz answers 200. Its options are this package's (WithTenancy,
// WithMaxStaleness, WithAudit, ...) and testcontainers' own, which
// customise the lookupd container. On error, what was started is
// terminated again.
func Run(ctx context.Context, img string, opts ...testcontainers.ContainerCustomizer) (_ *Container, err error) {
	o := defaultOptions()
	var custom []testcontainers.ContainerCustomizer
	for _, opt := range opts {
		if mine, ok := opt.(Option); ok {
			if err := mine(&o); err != nil {
				return nil, fmt.Errorf("lookupdcontainer: %w", err)
			}
			continue
		}
		custom = append(custom, opt)
	}
	c := &Container{policy: lookuptest.TokenPolicy{Issuer: o.issuer, Audience: o.audience, TenantClaim: o.tenantClaim}}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("lookupdcontainer: %w", err), c.Terminate(context.WithoutCancel(ctx)))
		}
	}()
	if c.key, err = lookuptest.NewKey(); err != nil {
		return nil, err
	}
	if c.network, err = tcnetwork.New(ctx); err != nil {
		return nil, fmt.Errorf("network: %w", err)
	}
	if err := c.startNATS(ctx, o); err != nil {
		return nil, err
	}
	if err := c.startLookupd(ctx, img, o, custom); err != nil {
		return nil, err
	}
	return c, nil
}

// startNATS starts the NATS server and creates the source stream from the
// host, as deployed (deploy/streams/persons.json).
func (c *Container) startNATS(ctx context.Context, o options) (err error) {
	c.NATS, err = testcontainers.Run(ctx, o.natsImage,
		testcontainers.WithExposedPorts("4222/tcp", "8222/tcp"),
		tcnetwork.WithNetwork([]string{"nats"}, c.network),
		testcontainers.WithWaitStrategy(wait.ForLog("Server is ready").WithStartupTimeout(60*time.Second)),
	)
	if err != nil {
		return fmt.Errorf("NATS %s: %w", o.natsImage, err)
	}
	if c.natsURL, err = c.NATS.PortEndpoint(ctx, "4222/tcp", "nats"); err != nil {
		return fmt.Errorf("NATS endpoint: %w", err)
	}
	if c.nc, err = nats.Connect(c.natsURL, nats.Name("lookupdcontainer")); err != nil {
		return fmt.Errorf("connect to NATS at %s: %w", c.natsURL, err)
	}
	js, err := jetstream.New(c.nc)
	if err != nil {
		return err
	}
	if err := dev.EnsurePersonsStream(ctx, js, o.stream); err != nil {
		return err
	}
	c.pub = events.NewPublisher(js)
	return nil
}

// startLookupd starts lookupd serve, trusting the JWKS of c's key.
func (c *Container) startLookupd(ctx context.Context, img string, o options, custom []testcontainers.ContainerCustomizer) (err error) {
	env := map[string]string{
		"LOOKUP_NATS_URL":  "nats://nats:4222",
		"LOOKUP_STREAM":    o.stream,
		"LOOKUP_JWKS_FILE": "/etc/lookupd/jwks.json",
		"LOOKUP_ISSUER":    o.issuer,
		"LOOKUP_AUDIENCE":  o.audience,
	}
	for k, v := range o.env {
		env[k] = v
	}
	base := []testcontainers.ContainerCustomizer{
		testcontainers.WithCmd("serve"),
		testcontainers.WithEnv(env),
		testcontainers.WithExposedPorts("8080/tcp", "9090/tcp"),
		testcontainers.WithFiles(testcontainers.ContainerFile{Reader: bytes.NewReader(c.key.JWKS()),
			ContainerFilePath: "/etc/lookupd/jwks.json", FileMode: 0o444}),
		tcnetwork.WithNetwork([]string{"lookupd"}, c.network),
		// An HTTP probe from the host: the image has no shell for
		// testcontainers' port checks.
		testcontainers.WithWaitStrategy(wait.ForHTTP("/readyz").WithPort("9090/tcp").WithStartupTimeout(60 * time.Second)),
	}
	c.Container, err = testcontainers.Run(ctx, img, append(base, custom...)...)
	if err != nil {
		return fmt.Errorf("lookupd %s: %w", img, err)
	}
	if c.apiURL, err = c.PortEndpoint(ctx, "8080/tcp", "http"); err != nil {
		return fmt.Errorf("API endpoint: %w", err)
	}
	if c.adminURL, err = c.PortEndpoint(ctx, "9090/tcp", "http"); err != nil {
		return fmt.Errorf("admin endpoint: %w", err)
	}
	return nil
}

// APIURL is the base URL of the HTTP API, as the host reaches it.
func (c *Container) APIURL() string { return c.apiURL }

// AdminURL is the base URL of the admin listener (/livez, /readyz,
// /metrics), as the host reaches it.
func (c *Container) AdminURL() string { return c.adminURL }

// NATSURL is the URL of the NATS server, as the host reaches it.
func (c *Container) NATSURL() string { return c.natsURL }

// Token returns a token lookupd accepts, unless opts say otherwise (the
// options of lookuptest: Expired, Scopes, Tenants, SignedByAnotherKey...).
func (c *Container) Token(opts ...lookuptest.TokenOption) (string, error) {
	return c.key.Token(c.policy, opts...)
}

// Client returns a client of the API with a token of Token(), and opts.
func (c *Container) Client(opts ...client.Option) (*client.Client, error) {
	tok, err := c.Token()
	if err != nil {
		return nil, err
	}
	return client.New(c.apiURL, append([]client.Option{client.WithToken(tok)}, opts...)...)
}

// Publish publishes e through events.Publisher and returns its stream
// sequence; an event the contract refuses is not published.
func (c *Container) Publish(ctx context.Context, e events.Event) (uint64, error) {
	seq, err := c.pub.Publish(ctx, e)
	if err == nil {
		c.versions.Observe(e)
	}
	return seq, err
}

// Upsert publishes the upsert of each of data (events.Consumer,
// events.BusinessContact, events.Signer) at its entity's next version
// (lookuptest.Versions), as Seed does, and returns the last one's
// sequence once lookupd has applied it.
func (c *Container) Upsert(ctx context.Context, data ...any) (uint64, error) {
	return c.seedWith(ctx, c.versions.Upsert, data)
}

// Delete publishes the deletion of each of data (an entity's upsert
// data, or its deletion: events.ConsumerDeleted, ...) at its entity's
// next version, as Upsert does.
func (c *Container) Delete(ctx context.Context, data ...any) (uint64, error) {
	return c.seedWith(ctx, c.versions.Delete, data)
}

func (c *Container) seedWith(ctx context.Context, build func(any) (events.Event, error), data []any) (uint64, error) {
	es := make([]events.Event, len(data))
	for i, d := range data {
		e, err := build(d)
		if err != nil {
			return 0, fmt.Errorf("lookupdcontainer: %w (event %d of %d; nothing published)", err, i+1, len(data))
		}
		es[i] = e
	}
	return c.Seed(ctx, es...)
}

// Seed checks every one of es against the contract, publishes them in
// order, waits until lookupd has applied the last and returns its
// sequence. If one is invalid, none is published.
func (c *Container) Seed(ctx context.Context, es ...events.Event) (uint64, error) {
	for i, e := range es {
		if _, err := events.NewMsg(e); err != nil {
			return 0, fmt.Errorf("lookupdcontainer: seed: event %d of %d: %w (nothing published)", i+1, len(es), err)
		}
	}
	var last uint64
	for i, e := range es {
		seq, err := c.pub.Publish(ctx, e)
		if err != nil {
			return last, fmt.Errorf("lookupdcontainer: seed: event %d of %d: %w", i+1, len(es), err)
		}
		c.versions.Observe(e)
		last = seq
	}
	return last, c.WaitForPosition(ctx, last)
}

// noOne is an id no fixture uses: WaitForPosition reads it.
const noOne = "00000000-0000-4000-8000-000000000000"

// WaitForPosition waits until lookupd has applied seq: it asks for a
// person with Lookup-Min-Position seq, which lookupd answers (here 404)
// only once it has, until ctx is done.
func (c *Container) WaitForPosition(ctx context.Context, seq uint64) error {
	cl, err := c.Client(client.WithRetries(0))
	if err != nil {
		return err
	}
	for {
		_, err := cl.GetPerson(ctx, noOne, client.MinPosition(seq), client.MaxWait(time.Second))
		switch {
		case err == nil, errors.Is(err, client.ErrNotFound):
			return nil
		case errors.Is(err, client.ErrPositionNotReached), errors.Is(err, client.ErrNotReady):
		default:
			return fmt.Errorf("lookupdcontainer: wait for position %d: %w", seq, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("lookupdcontainer: wait for position %d: %w", seq, ctx.Err())
		}
	}
}

// Terminate stops lookupd and NATS and removes their network. It may be
// called on a Container that Run only half started, and on the nil
// *Container a failed Run returns (it then does nothing), so that a
// cleanup registered before Run's error is checked does not panic over
// that error.
func (c *Container) Terminate(ctx context.Context, opts ...testcontainers.TerminateOption) error {
	if c == nil {
		return nil
	}
	var errs []error
	if c.Container != nil {
		errs = append(errs, c.Container.Terminate(ctx, opts...))
	}
	if c.nc != nil {
		c.nc.Close()
	}
	if c.NATS != nil {
		errs = append(errs, c.NATS.Terminate(ctx, opts...))
	}
	if c.network != nil {
		errs = append(errs, c.network.Remove(ctx))
	}
	return errors.Join(errs...)
}
