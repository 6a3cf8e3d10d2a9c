package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/httpget"
	"github.com/lookup/persons/internal/wait"
)

// Signers is how many authorized signers the fixture's consumer has.
const Signers = 5

// Fixture is the data set the load runs read: one consumer (the person of
// GET person) with exactly Signers authorized signers.
type Fixture struct {
	Consumer string
	Signers  []string
}

// PersonPath and SignersPath are the request paths (with the query) of the
// measured GETs.
func (f Fixture) PersonPath() string { return "/api/v1/persons/" + f.Consumer }

func (f Fixture) SignersPath() string {
	return "/api/v1/authorized-signers?consumer_id=" + f.Consumer + "&expand=PROTECTED_PERSONAL_DATA"
}

// NewFixture returns a fixture with fresh random ids.
func NewFixture() Fixture {
	f := Fixture{Consumer: uuid.NewString()}
	for range Signers {
		f.Signers = append(f.Signers, uuid.NewString())
	}
	return f
}

// Events returns the events that create f, in publishing order.
func (f Fixture) Events() ([]events.Event, error) {
	data := []any{events.Consumer{
		ConsumerID: f.Consumer, BusinessID: uuid.NewSHA1(uuid.NameSpaceOID, []byte("loadtest")).String(),
		FirstName: "Load", MiddleName: "T", LastName: "Tester",
	}}
	for i, id := range f.Signers {
		data = append(data, events.Signer{
			SignerID: id, ConsumerID: f.Consumer,
			FirstName: fmt.Sprintf("Signer%d", i), LastName: "Tester",
			HIPAAAuthorized: i%2 == 0,
			AccountAccess:   events.AccountAccessPHI,
			Status:          events.SignerStatusActive,
			Type:            events.SignerTypeAuthorizedSigner,
			Address:         &events.Address{Line1: fmt.Sprintf("%d Main Street", 100+i), City: "Springfield", State: "IL", ZipCode: "62701", Country: "US"},
			Phone:           &events.Phone{CountryCode: "+1", AreaCode: "217", Number: fmt.Sprintf("555%04d", 100+i)},
			SSN:             fmt.Sprintf("9%02d-55-%04d", 10+i, 1000+i),
			DateOfBirth:     fmt.Sprintf("19%02d-0%d-1%d", 60+i, 1+i, i),
		})
	}
	evs := make([]events.Event, 0, len(data))
	for _, d := range data {
		ev, err := events.NewEvent("urn:lookupd:loadtest", 1, d)
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// Publish publishes f through events.Publisher to the NATS server at url
// (the dev server's, whose stream holds persons.>).
func (f Fixture) Publish(ctx context.Context, url string) error {
	evs, err := f.Events()
	if err != nil {
		return err
	}
	nc, err := nats.Connect(url, nats.Name("lookupd-loadtest"))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	p := events.NewPublisher(js)
	for _, ev := range evs {
		if _, err := p.Publish(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// WaitProjected polls the API at base with token until it answers GET
// person and GET signers with all of f's signers, or timeout passes.
func (f Fixture) WaitProjected(c *http.Client, base, token string, timeout time.Duration) error {
	return wait.Until(timeout, func() error {
		if _, err := Get(c, base+f.PersonPath(), token); err != nil {
			return err
		}
		r, err := Get(c, base+f.SignersPath(), token)
		if err != nil {
			return err
		}
		var page struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(r.Body, &page); err != nil {
			return fmt.Errorf("GET signers: %w", err)
		}
		if len(page.Items) != len(f.Signers) {
			return fmt.Errorf("GET signers: %d items, want %d", len(page.Items), len(f.Signers))
		}
		return nil
	})
}

// Response is one captured answer.
type Response = httpget.Response

// Get sends GET rawURL with token as a bearer token (none when "") and
// returns the answer, or an error when it is not 200 OK.
func Get(c *http.Client, rawURL, token string) (Response, error) {
	r, err := httpget.Get(c, rawURL, token, nil)
	if err != nil {
		return Response{}, err
	}
	if r.Status != http.StatusOK {
		path := rawURL
		if u, err := url.Parse(rawURL); err == nil {
			path = u.Path
		}
		return Response{}, fmt.Errorf("GET %s: %d %s", path, r.Status, http.StatusText(r.Status))
	}
	return r, nil
}
