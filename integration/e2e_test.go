//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
)

const testSource = "urn:lookup:integration"

// fixture is a data set that uses every event type: a consumer with three
// signers (one later deleted), a business contact, a consumer deleted after
// it was created, a deleted business contact, and a consumer with no signers.
type fixture struct {
	business               string
	consumer               string // has signers full and bare
	signerFull, signerBare string
	signerGone             string // deleted
	contact                string
	contactGone            string // deleted
	consumerGone           string // deleted
	consumerAlone          string // no signers
	events                 []events.Event
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	id := uuid.NewString
	f := &fixture{
		business: id(), consumer: id(), signerFull: id(), signerBare: id(), signerGone: id(),
		contact: id(), contactGone: id(), consumerGone: id(), consumerAlone: id(),
	}
	add := func(version uint64, data any) {
		t.Helper()
		ev, err := events.NewEvent(testSource, version, data)
		if err != nil {
			t.Fatalf("new event %T: %v", data, err)
		}
		f.events = append(f.events, ev)
	}
	add(1, events.Consumer{ConsumerID: f.consumer, BusinessID: f.business, FirstName: "Ada", LastName: "Lovelace"})
	add(2, events.Consumer{ConsumerID: f.consumer, BusinessID: f.business, FirstName: "Ada", MiddleName: "King", LastName: "Lovelace"})
	add(1, events.Signer{
		SignerID: f.signerFull, ConsumerID: f.consumer, FirstName: "Charles", MiddleName: "B", LastName: "Babbage",
		HIPAAAuthorized: true, AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusActive,
		Type:    events.SignerTypePowerOfAttorney,
		Address: &events.Address{Line1: "1 Analytical Way", City: "London", State: "LN", ZipCode: "12345", Country: "GB"},
		Phone:   &events.Phone{CountryCode: "+44", AreaCode: "20", Number: "5550100"},
		SSN:     "123-45-6789", DateOfBirth: "1791-12-26",
	})
	add(1, events.Signer{
		SignerID: f.signerBare, ConsumerID: f.consumer, FirstName: "Mary", LastName: "Somerville",
		AccountAccess: events.AccountAccessNone, Status: events.SignerStatusPending, Type: events.SignerTypeGuardian,
	})
	add(1, events.Signer{
		SignerID: f.signerGone, ConsumerID: f.consumer, FirstName: "Gone", LastName: "Signer",
		AccountAccess: events.AccountAccessUnspecified, Status: events.SignerStatusInactive, Type: events.SignerTypeParent,
	})
	add(2, events.SignerDeleted{SignerID: f.signerGone, ConsumerID: f.consumer})
	add(1, events.BusinessContact{ContactID: f.contact, BusinessID: f.business, FirstName: "Grace", LastName: "Hopper"})
	add(1, events.BusinessContact{ContactID: f.contactGone, BusinessID: f.business, FirstName: "Old", LastName: "Contact"})
	add(2, events.BusinessContactDeleted{ContactID: f.contactGone})
	add(1, events.Consumer{ConsumerID: f.consumerGone, BusinessID: f.business, FirstName: "Gone", LastName: "Consumer"})
	add(2, events.ConsumerDeleted{ConsumerID: f.consumerGone})
	add(1, events.Consumer{ConsumerID: f.consumerAlone, BusinessID: f.business, FirstName: "Alan", LastName: "Turing"})
	seen := map[events.Type]bool{}
	for _, ev := range f.events {
		seen[ev.Type] = true
	}
	for _, typ := range events.Types {
		if !seen[typ] {
			t.Fatalf("fixture misses event type %s", typ)
		}
	}
	return f
}

// person is the Person body of the API.
type person struct {
	PersonID   string `json:"person_id"`
	BusinessID string `json:"business_id"`
	FirstName  string `json:"first_name"`
	MiddleName string `json:"middle_name"`
	LastName   string `json:"last_name"`
	Type       string `json:"type"`
}

// signer is an AuthorizedSigner of the API; pointers tell absent from empty.
type signer struct {
	FirstName       string             `json:"first_name"`
	MiddleName      string             `json:"middle_name"`
	LastName        string             `json:"last_name"`
	HIPAAAuthorized bool               `json:"hipaa_authorized"`
	AccountAccess   string             `json:"account_access"`
	Status          string             `json:"status"`
	Type            string             `json:"type"`
	Address         *events.Address    `json:"address"`
	Phone           *events.Phone      `json:"phone"`
	PPD             *map[string]string `json:"protected_personal_data"`
}

type signersResponse struct {
	Items []signer `json:"items"`
}

func decodeJSON(t *testing.T, r response, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// checkAPI runs the black-box checks of both operations against the
// fixture, projected by the lookupd at base.
func checkAPI(t *testing.T, base string, is *issuer, f *fixture) {
	good := is.token(t, "read:persons", time.Hour)
	ssn := is.token(t, "read:persons read:persons:ssn", time.Hour)

	t.Run("person consumer", func(t *testing.T) {
		r := getOK(t, base, "/api/v1/persons/"+strings.ToUpper(f.consumer), good)
		var p person
		decodeJSON(t, r, &p)
		want := person{PersonID: f.consumer, BusinessID: f.business, FirstName: "Ada", MiddleName: "King", LastName: "Lovelace", Type: "CONSUMER"}
		if p != want {
			t.Errorf("person: got %+v, want %+v", p, want)
		}
		if cc := r.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control: got %q, want no-store", cc)
		}
		if id := r.header.Get("X-Request-Id"); id == "" {
			t.Error("X-Request-Id: missing; one is generated when the caller sends none")
		}
	})
	t.Run("person business contact", func(t *testing.T) {
		r := getOK(t, base, "/api/v1/persons/"+f.contact, good)
		var p person
		decodeJSON(t, r, &p)
		want := person{PersonID: f.contact, BusinessID: f.business, FirstName: "Grace", LastName: "Hopper", Type: "BUSINESS_CONTACT"}
		if p != want {
			t.Errorf("person: got %+v, want %+v", p, want)
		}
		if strings.Contains(string(r.body), "middle_name") {
			t.Errorf("unknown middle_name must be left out: %s", r.body)
		}
	})
	t.Run("signers default", func(t *testing.T) {
		r := getOK(t, base, "/api/v1/authorized-signers?consumer_id="+f.consumer, good)
		var s signersResponse
		decodeJSON(t, r, &s)
		if len(s.Items) != 2 {
			t.Fatalf("items: got %d (%s), want 2 (the deleted signer is gone)", len(s.Items), r.body)
		}
		// Ordered by last_name: Babbage, Somerville.
		full, bare := s.Items[0], s.Items[1]
		if full.LastName != "Babbage" || bare.LastName != "Somerville" {
			t.Fatalf("order: got %s, %s; want Babbage, Somerville", full.LastName, bare.LastName)
		}
		if !full.HIPAAAuthorized || full.AccountAccess != "PHI" || full.Status != "ACTIVE" || full.Type != "POWER_OF_ATTORNEY" {
			t.Errorf("full signer: got %+v", full)
		}
		if full.Address == nil || full.Address.City != "London" || full.Phone == nil || full.Phone.Number != "5550100" {
			t.Errorf("full signer address/phone: got %+v %+v", full.Address, full.Phone)
		}
		if full.PPD != nil || bare.PPD != nil {
			t.Errorf("protected_personal_data without expand: got %s", r.body)
		}
		if bare.Address != nil || bare.Phone != nil || bare.Status != "PENDING" {
			t.Errorf("bare signer: got %+v", bare)
		}
	})
	t.Run("signers expanded", func(t *testing.T) {
		tests := []struct {
			name, query, token, wantSSN string
		}{
			{"default LAST4", "&expand=PROTECTED_PERSONAL_DATA", good, "6789"},
			{"MASKED", "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=MASKED", good, "***-**-6789"},
			{"FULL", "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL", ssn, "123-45-6789"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := getOK(t, base, "/api/v1/authorized-signers?consumer_id="+f.consumer+tt.query, tt.token)
				var s signersResponse
				decodeJSON(t, r, &s)
				if len(s.Items) != 2 || s.Items[0].PPD == nil || s.Items[1].PPD == nil {
					t.Fatalf("want protected_personal_data on both signers: %s", r.body)
				}
				ppd := *s.Items[0].PPD
				if ppd["social_security_number"] != tt.wantSSN || ppd["date_of_birth"] != "1791-12-26" {
					t.Errorf("protected_personal_data: got %v, want ssn %q, dob 1791-12-26", ppd, tt.wantSSN)
				}
				if len(*s.Items[1].PPD) != 0 {
					t.Errorf("bare signer protected_personal_data: got %v, want {}", *s.Items[1].PPD)
				}
			})
		}
	})

	errTests := []struct {
		name, path, token string
		want              int
		wantAuthenticate  string // substring of WWW-Authenticate
	}{
		{"401 no token", "/api/v1/persons/" + f.consumer, "", http.StatusUnauthorized, "Bearer"},
		{"401 expired", "/api/v1/persons/" + f.consumer, is.token(t, "read:persons", -time.Minute), http.StatusUnauthorized, `error="invalid_token"`},
		{"401 foreign key", "/api/v1/persons/" + f.consumer, newIssuer(t).token(t, "read:persons", time.Hour), http.StatusUnauthorized, `error="invalid_token"`},
		{"401 signers no token", "/api/v1/authorized-signers?consumer_id=" + f.consumer, "", http.StatusUnauthorized, "Bearer"},
		{"403 no scope", "/api/v1/persons/" + f.consumer, is.token(t, "profile", time.Hour), http.StatusForbidden, `error="insufficient_scope"`},
		{"403 signers no scope", "/api/v1/authorized-signers?consumer_id=" + f.consumer, is.token(t, "profile", time.Hour), http.StatusForbidden, `error="insufficient_scope"`},
		{"403 FULL without ssn scope", "/api/v1/authorized-signers?consumer_id=" + f.consumer + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL", good, http.StatusForbidden, ""},
		{"404 unknown person", "/api/v1/persons/" + uuid.NewString(), good, http.StatusNotFound, ""},
		{"404 deleted consumer", "/api/v1/persons/" + f.consumerGone, good, http.StatusNotFound, ""},
		{"404 deleted contact", "/api/v1/persons/" + f.contactGone, good, http.StatusNotFound, ""},
		{"404 consumer without signers", "/api/v1/authorized-signers?consumer_id=" + f.consumerAlone, good, http.StatusNotFound, ""},
		{"404 signers of deleted consumer", "/api/v1/authorized-signers?consumer_id=" + f.consumerGone, good, http.StatusNotFound, ""},
		{"400 bad uuid", "/api/v1/persons/not-a-uuid", good, http.StatusBadRequest, ""},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, base, tt.path, tt.token)
			if r.status != tt.want {
				t.Fatalf("status: got %d, want %d: %s", r.status, tt.want, r.body)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
				t.Errorf("Content-Type: got %q, want application/problem+json", ct)
			}
			var p struct {
				Status   int    `json:"status"`
				Instance string `json:"instance"`
			}
			decodeJSON(t, r, &p)
			if p.Status != tt.want {
				t.Errorf("problem status: got %d, want %d", p.Status, tt.want)
			}
			if tt.wantAuthenticate != "" && !strings.Contains(r.header.Get("WWW-Authenticate"), tt.wantAuthenticate) {
				t.Errorf("WWW-Authenticate: got %q, want it to contain %q", r.header.Get("WWW-Authenticate"), tt.wantAuthenticate)
			}
		})
	}
}

// TestEndToEnd publishes every event type into a NATS container, checks
// both operations of a lookupd container over its mapped port, then
// restarts lookupd on the same volume: the read model persists and nothing
// is applied twice.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nw, _, js := singleNATS(ctx, t)

	f := newFixture(t)
	last := publishAll(ctx, t, js, f.events)

	is := newIssuer(t)
	ld := startLookupd(ctx, t, lookupdConfig{network: nw, natsURL: "nats://nats:4222", volume: "lookupd-e2e-" + uuid.NewString(), jwks: is.jwks})
	ld.waitReady(t)
	ld.waitApplied(t, last, 60*time.Second)
	if got := ld.metric(t, "lookup_projector_events_applied_total"); got != float64(len(f.events)) {
		t.Errorf("applied: got %v, want %d", got, len(f.events))
	}

	checkAPI(t, ld.api, is, f)
	if t.Failed() {
		return
	}

	t.Run("nothing secret in the logs", func(t *testing.T) {
		logs := ld.logsThrough(ctx, t)
		for _, secret := range []string{"123-45-6789", "123456789", "1791-12-26", "eyJ", "Bearer "} {
			if strings.Contains(logs, secret) {
				t.Errorf("lookupd logs contain %q", secret)
			}
		}
	})

	t.Run("new container on the same volume resumes from the checkpoint", func(t *testing.T) {
		ld.replace(ctx, t)
		ld.waitReady(t)
		if got := ld.metric(t, "lookup_projector_applied_sequence"); got != float64(last) {
			t.Errorf("applied sequence after restart: got %v, want %d", got, last)
		}
		if got := ld.metric(t, "lookup_projector_events_applied_total"); got != 0 {
			t.Errorf("applied after restart with no new events: got %v, want 0", got)
		}
		r := get(t, ld.api, "/api/v1/persons/"+f.consumer, is.token(t, "read:persons", time.Hour))
		if r.status != http.StatusOK {
			t.Fatalf("read model after restart: got %d, want 200: %s", r.status, r.body)
		}

		const n = 25
		more := make([]events.Event, 0, n)
		for i := range n {
			ev, err := events.NewEvent(testSource, 1, events.BusinessContact{
				ContactID: uuid.NewString(), BusinessID: f.business, FirstName: fmt.Sprintf("New%d", i), LastName: "Contact",
			})
			if err != nil {
				t.Fatal(err)
			}
			more = append(more, ev)
		}
		last2 := publishAll(ctx, t, js, more)
		ld.waitApplied(t, last2, 60*time.Second)
		if got := ld.metric(t, "lookup_projector_events_applied_total"); got != n {
			t.Errorf("applied after %d new events: got %v, want %d", n, got, n)
		}
		if got := ld.metric(t, "lookup_projector_events_skipped_total"); got != 0 {
			t.Errorf("skipped after restart: got %v, want 0", got)
		}
		checkAPI(t, ld.api, is, f)
	})

	t.Run("invalid event is dead-lettered and projection goes on", func(t *testing.T) {
		before := ld.metric(t, "lookup_projector_events_dead_lettered_total")
		subject := events.SubjectPrefixConsumer + uuid.NewString()
		msg := nats.NewMsg(subject)
		msg.Header.Set(jetstream.MsgIDHeader, uuid.NewString())
		msg.Data = []byte(`{"specversion":"1.0","id":"x","source":"urn:bad","type":"persons.consumer.upserted.v1","entityversion":0,"data":{}}`)
		ack, err := js.PublishMsg(ctx, msg)
		if err != nil {
			t.Fatalf("publish invalid event: %v", err)
		}
		ev, err := events.NewEvent(testSource, 1, events.Consumer{ConsumerID: uuid.NewString(), BusinessID: f.business, FirstName: "After", LastName: "Invalid"})
		if err != nil {
			t.Fatal(err)
		}
		after := publishAll(ctx, t, js, []events.Event{ev})
		ld.waitApplied(t, after, 60*time.Second)
		if got := ld.metric(t, "lookup_projector_events_dead_lettered_total"); got != before+1 {
			t.Errorf("dead-lettered: got %v, want %v", got, before+1)
		}
		dlq, err := js.Stream(ctx, "PERSONS_DLQ")
		if err != nil {
			t.Fatalf("dead-letter stream: %v", err)
		}
		m, err := dlq.GetLastMsgForSubject(ctx, "dlq."+subject)
		if err != nil {
			t.Fatalf("dead letter of %s: %v", subject, err)
		}
		// The headers are the operator contract of the dead-letter stream.
		if got := m.Header.Get("Lookup-Original-Subject"); got != subject {
			t.Errorf("Lookup-Original-Subject: got %q, want %q", got, subject)
		}
		if got := m.Header.Get("Lookup-Original-Sequence"); got != strconv.FormatUint(ack.Sequence, 10) {
			t.Errorf("Lookup-Original-Sequence: got %q, want %d", got, ack.Sequence)
		}
		if got := m.Header.Get("Lookup-Dlq-Reason"); !strings.Contains(got, "entityversion") {
			t.Errorf("Lookup-Dlq-Reason: got %q, want it to name entityversion", got)
		}
	})

	t.Run("tenancy", func(t *testing.T) {
		tl := startLookupd(ctx, t, lookupdConfig{network: nw, natsURL: "nats://nats:4222", volume: "lookupd-tenant-" + uuid.NewString(), jwks: is.jwks,
			env: map[string]string{"LOOKUP_TENANT_CLAIM": "business_ids"}})
		tl.waitReady(t)
		own := is.tokenWith(t, "read:persons", time.Hour, map[string]any{"business_ids": []string{f.business}})
		other := is.tokenWith(t, "read:persons", time.Hour, map[string]any{"business_ids": []string{uuid.NewString()}})
		none := is.token(t, "read:persons", time.Hour)
		tests := []struct {
			name, path, token string
			want              int
		}{
			{"own person", "/api/v1/persons/" + f.consumer, own, http.StatusOK},
			{"own signers", "/api/v1/authorized-signers?consumer_id=" + f.consumer, own, http.StatusOK},
			{"own contact", "/api/v1/persons/" + f.contact, own, http.StatusOK},
			{"other tenant's person", "/api/v1/persons/" + f.consumer, other, http.StatusForbidden},
			{"other tenant's signers", "/api/v1/authorized-signers?consumer_id=" + f.consumer, other, http.StatusForbidden},
			{"token without the claim", "/api/v1/persons/" + f.consumer, none, http.StatusForbidden},
			{"unknown person stays 404", "/api/v1/persons/" + uuid.NewString(), own, http.StatusNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if r := get(t, tl.api, tt.path, tt.token); r.status != tt.want {
					t.Errorf("status: got %d, want %d: %s", r.status, tt.want, r.body)
				}
			})
		}
	})
}
