package cloudeventssdk

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	cejsm "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/events"
	"github.com/lookup/persons/lookuptest"
)

const business = "5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

// family is a consumer with two signers, the second updated once, all
// with distinct ids: the events of one publisher.
func family() []events.Event {
	c, s1, s2 := uuid.NewString(), uuid.NewString(), uuid.NewString()
	signer := func(id, first string) events.Signer {
		return events.Signer{SignerID: id, ConsumerID: c, FirstName: first, LastName: "Turing",
			HIPAAAuthorized: true, AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusActive,
			Type: events.SignerTypePowerOfAttorney, SSN: "123456789", DateOfBirth: "1970-01-31",
			Address: &events.Address{Line1: "1 Main St", City: "Springfield", State: "IL", ZipCode: "62701", Country: "US"}}
	}
	ev := func(version uint64, data any) events.Event {
		e, err := events.NewEvent("urn:example:crm", version, data)
		if err != nil {
			panic(err)
		}
		e.Time = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
		return e
	}
	return []events.Event{
		ev(1, events.Consumer{ConsumerID: c, BusinessID: business, FirstName: "Ada", LastName: "Lovelace"}),
		ev(1, signer(s1, "Alan")),
		ev(1, signer(s2, "Joan")),
		ev(2, signer(s2, "Joan Elisabeth")),
	}
}

// viaSDK publishes e through the CloudEvents SDK, structured or not.
func viaSDK(t *testing.T, nc *nats.Conn, e events.Event, structured bool) {
	t.Helper()
	ce, err := NewEvent(string(e.Type), e.ID, e.Source, int32(e.EntityVersion), e.Data)
	if err != nil {
		t.Fatal(err)
	}
	ce.SetTime(e.Time)
	if err := Publish(t.Context(), nc, "PERSONS", e.Subject(), ce, structured); err != nil {
		t.Fatal(err)
	}
}

// answer is what the API says of a consumer's signers, ids left out.
func answer(t *testing.T, c *client.Client, consumer string, position uint64) any {
	t.Helper()
	res, err := c.AuthorizedSigners(t.Context(), consumer, client.Expand(client.ProtectedPersonalData),
		client.SSN(client.SSNLast4), client.MinPosition(position))
	if err != nil {
		t.Fatalf("signers of %s: %v", consumer, err)
	}
	b, _ := json.Marshal(res.Items)
	return string(b)
}

// TestSDKEventsApplyAsOurs: the same events published by the official
// CloudEvents SDK in binary mode (its default) and in structured mode,
// through its JetStream binding, are applied exactly as those of
// events.Publisher: the API answers the same, and nothing is
// dead-lettered.
func TestSDKEventsApplyAsOurs(t *testing.T) {
	srv := lookuptest.New(t)
	nc, err := nats.Connect(srv.NATSURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := srv.Client()

	var want any
	for _, mode := range []string{"events.Publisher", "SDK binary", "SDK structured"} {
		t.Run(mode, func(t *testing.T) {
			evs := family()
			var last uint64
			for _, e := range evs {
				switch mode {
				case "events.Publisher":
					if last, err = srv.Publish(t.Context(), e); err != nil {
						t.Fatal(err)
					}
				default:
					viaSDK(t, nc, e, mode == "SDK structured")
				}
			}
			if last == 0 {
				js, _ := jetstream.New(nc)
				st, err := js.Stream(t.Context(), "PERSONS")
				if err != nil {
					t.Fatal(err)
				}
				last = st.CachedInfo().State.LastSeq
			}
			got := answer(t, c, evs[0].Data.(events.Consumer).ConsumerID, last)
			if want == nil {
				want = got
			} else if !reflect.DeepEqual(got, want) {
				t.Errorf("the API answers\n%s\nfor the SDK's events, and\n%s\nfor ours", got, want)
			}
		})
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if dlq, err := js.Stream(t.Context(), "PERSONS_DLQ"); err == nil {
		if n := dlq.CachedInfo().State.Msgs; n != 0 {
			t.Errorf("%d events dead-lettered", n)
		}
	}
}

// TestSDKReadsOurEvents: an event our publisher writes, in either mode, is
// read back by the SDK as the same CloudEvent: id, source, type, time, the
// entityversion extension and the data.
func TestSDKReadsOurEvents(t *testing.T) {
	for _, e := range family() {
		for name, newMsg := range map[string]func(events.Event) (*nats.Msg, error){
			"structured": events.NewMsg, "binary": events.NewBinaryMsg} {
			t.Run(fmt.Sprintf("%s %s", e.Type, name), func(t *testing.T) {
				msg, err := newMsg(e)
				if err != nil {
					t.Fatal(err)
				}
				ce, err := binding.ToEvent(context.Background(), cejsm.NewMessage(msg))
				if err != nil {
					t.Fatalf("the SDK cannot read our %s message: %v", name, err)
				}
				if ce.ID() != e.ID || ce.Source() != e.Source || ce.Type() != string(e.Type) || !ce.Time().Equal(e.Time) {
					t.Errorf("SDK read %s %s %s %s, want %s %s %s %s", ce.ID(), ce.Source(), ce.Type(), ce.Time(), e.ID, e.Source, e.Type, e.Time)
				}
				if v := fmt.Sprint(ce.Extensions()["entityversion"]); v != fmt.Sprint(e.EntityVersion) {
					t.Errorf("entityversion = %s, want %d", v, e.EntityVersion)
				}
				var got, want map[string]any
				wantJSON, _ := json.Marshal(e.Data)
				if err := json.Unmarshal(ce.Data(), &got); err != nil {
					t.Fatalf("data %s: %v", ce.Data(), err)
				}
				_ = json.Unmarshal(wantJSON, &want)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("data = %s, want %s", ce.Data(), wantJSON)
				}
			})
		}
	}
}
