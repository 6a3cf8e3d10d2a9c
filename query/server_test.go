package query

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/lookup/persons/events"
)

func TestGetPersonSmoke(t *testing.T) {
	reader := &fakeReader{
		PersonFunc: func(_ context.Context, id string) (events.Person, error) {
			if id != consumerA {
				return events.Person{}, events.ErrNotFound
			}
			return events.Person{ID: consumerA, BusinessID: businessA, FirstName: "Ann", LastName: "Lee", Type: events.PersonTypeConsumer}, nil
		},
	}
	s := newTestServer(t, reader, "")
	rec := serve(t, s, newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, rsaToken(t, goodClaims("read:persons"))))
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", rec.Code, rec.Body)
	}
	var got personJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.PersonID != consumerA || got.FirstName != "Ann" {
		t.Errorf("got %+v", got)
	}
}
