package query_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/lookuptest"
	"github.com/lookup/persons/query"
)

// people is a read model of its own: one consumer, no signers.
type people map[string]events.Person

func (p people) Person(_ context.Context, id string) (events.Person, error) {
	if x, ok := p[id]; ok {
		return x, nil
	}
	return events.Person{}, events.ErrNotFound
}

func (p people) Signers(_ context.Context, id string) (events.Person, []events.Signer, error) {
	x, err := p.Person(context.Background(), id)
	return x, nil, err
}

// The API over a Reader of one's own, its tokens verified against a JWKS.
func Example() {
	dir, err := os.MkdirTemp("", "query-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	key, err := lookuptest.NewKey() // in production: your identity provider's JWKS
	if err != nil {
		panic(err)
	}
	jwksPath := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(jwksPath, key.JWKS(), 0o600); err != nil {
		panic(err)
	}
	keys, err := auth.LoadJWKSFile(jwksPath)
	if err != nil {
		panic(err)
	}
	tokens, err := auth.NewVerifier(auth.Config{Keys: keys, Issuer: "https://issuer.example/", Audience: "lookupd"})
	if err != nil {
		panic(err)
	}
	api, err := query.NewServer(query.Config{Tokens: tokens, Reader: people{
		"c0000000-0000-4000-8000-00000000000a": {ID: "c0000000-0000-4000-8000-00000000000a",
			BusinessID: "b0000000-0000-4000-8000-00000000000b", FirstName: "Ada", LastName: "Lovelace", Type: events.PersonTypeConsumer},
	}})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()

	tok, err := key.Token(lookuptest.TokenPolicy{Issuer: "https://issuer.example/", Audience: "lookupd"})
	if err != nil {
		panic(err)
	}
	for _, id := range []string{"c0000000-0000-4000-8000-00000000000a", "c0000000-0000-4000-8000-0000000000ff"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/persons/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Print(resp.StatusCode, " ", string(body))
	}
	// Output:
	// 200 {"person_id":"c0000000-0000-4000-8000-00000000000a","business_id":"b0000000-0000-4000-8000-00000000000b","first_name":"Ada","last_name":"Lovelace","type":"CONSUMER"}
	// 404 {"type":"https://lookup.example/problems/not-found","title":"Resource not found","status":404,"detail":"No person has this person_id.","instance":"/api/v1/persons/c0000000-0000-4000-8000-0000000000ff"}
}
