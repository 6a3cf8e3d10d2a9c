package signercheck_test

import (
	"testing"

	"golang.org/x/oauth2"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/lookuptest"
)

// TestOAuth2TokenSource: the client takes an oauth2.TokenSource as it is,
// as a caller with an OAuth 2.0 set-up would give it.
func TestOAuth2TokenSource(t *testing.T) {
	srv := lookuptest.New(t)
	if _, err := srv.Seed(t.Context(), fixtures(t)...); err != nil {
		t.Fatal(err)
	}
	tok, err := srv.Token()
	if err != nil {
		t.Fatal(err)
	}
	ts := oauth2.ReuseTokenSource(nil, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok, TokenType: "Bearer"}))
	c, err := client.New(srv.APIURL(), client.WithTokenSource(ts))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.GetPerson(t.Context(), consumerID)
	if err != nil || res.Person.FirstName != "Ada" {
		t.Fatalf("GetPerson with an oauth2 token source: %+v, %v", res, err)
	}
}
