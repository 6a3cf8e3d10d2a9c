package openapiclients

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/examples/openapi-clients/oapiclient"
	"github.com/lookup/persons/examples/openapi-clients/ogenclient"
	"github.com/lookup/persons/lookuptest"
)

// seeded is a test server holding one consumer with one signer.
type seeded struct {
	srv              *lookuptest.Server
	token            string
	consumer, signer string
}

func seed(t *testing.T) seeded {
	t.Helper()
	srv := lookuptest.New(t)
	c, s := uuid.NewString(), uuid.NewString()
	var evs []events.Event
	for _, data := range []any{
		events.Consumer{ConsumerID: c, BusinessID: uuid.NewString(), FirstName: "Ada", LastName: "Lovelace"},
		events.Signer{SignerID: s, ConsumerID: c, FirstName: "Alan", LastName: "Turing", HIPAAAuthorized: true,
			AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusActive, Type: events.SignerTypePowerOfAttorney,
			SSN: "123456789", DateOfBirth: "1970-01-31"},
	} {
		e, err := events.NewEvent("urn:test", 1, data)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	if _, err := srv.Seed(t.Context(), evs...); err != nil {
		t.Fatal(err)
	}
	tok, err := srv.Token()
	if err != nil {
		t.Fatal(err)
	}
	return seeded{srv: srv, token: tok, consumer: c, signer: s}
}

// TestOapiCodegenClient: the client oapi-codegen generates at its defaults
// reads a person, a consumer's signers with their protected data, and a
// 404 problem.
func TestOapiCodegenClient(t *testing.T) {
	s := seed(t)
	c, err := oapiclient.NewClientWithResponses(s.srv.APIURL(), oapiclient.WithRequestEditorFn(
		func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+s.token)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.GetPersonWithResponse(t.Context(), s.consumer, nil)
	if err != nil || p.JSON200 == nil {
		t.Fatalf("GetPerson: %v, status %d", err, p.StatusCode())
	}
	if p.JSON200.FirstName != "Ada" || p.JSON200.Type != oapiclient.CONSUMER {
		t.Errorf("person = %+v", *p.JSON200)
	}
	expand := oapiclient.PROTECTEDPERSONALDATA
	sg, err := c.GetAuthorizedSignersWithResponse(t.Context(), &oapiclient.GetAuthorizedSignersParams{ConsumerId: s.consumer, Expand: &expand})
	if err != nil || sg.JSON200 == nil {
		t.Fatalf("GetAuthorizedSigners: %v, status %d", err, sg.StatusCode())
	}
	if len(sg.JSON200.Items) != 1 || sg.JSON200.Items[0].ProtectedPersonalData == nil ||
		sg.JSON200.Items[0].ProtectedPersonalData.DateOfBirth == nil || sg.JSON200.Items[0].ProtectedPersonalData.DateOfBirth.String() != "1970-01-31" {
		t.Errorf("signers = %+v", sg.JSON200.Items)
	}
	nf, err := c.GetPersonWithResponse(t.Context(), uuid.NewString(), nil)
	if err != nil || nf.ApplicationproblemJSON404 == nil {
		t.Fatalf("GetPerson of nobody: %v, status %d, body %s", err, nf.StatusCode(), nf.Body)
	}
	if nf.ApplicationproblemJSON404.Status != 404 || nf.ApplicationproblemJSON404.Type != "https://lookup.example/problems/not-found" {
		t.Errorf("problem = %+v", *nf.ApplicationproblemJSON404)
	}
}

// bearer is ogen's SecuritySource: the token of every request.
type bearer string

func (b bearer) BearerAuth(context.Context, ogenclient.OperationName) (ogenclient.BearerAuth, error) {
	return ogenclient.BearerAuth{Token: string(b)}, nil
}

// TestOgenClient: the same with the client ogen generates at its defaults.
func TestOgenClient(t *testing.T) {
	s := seed(t)
	c, err := ogenclient.NewClient(s.srv.APIURL(), bearer(s.token))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.GetPerson(t.Context(), ogenclient.GetPersonParams{PersonID: ogenclient.UUID(s.consumer)})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := res.(*ogenclient.PersonHeaders)
	if !ok || p.Response.FirstName != "Ada" || p.Response.Type != ogenclient.PersonTypeCONSUMER {
		t.Fatalf("GetPerson = %#v", res)
	}
	sres, err := c.GetAuthorizedSigners(t.Context(), ogenclient.GetAuthorizedSignersParams{
		ConsumerID: ogenclient.UUID(s.consumer), Expand: ogenclient.NewOptExpand(ogenclient.ExpandPROTECTEDPERSONALDATA)})
	if err != nil {
		t.Fatal(err)
	}
	sg, ok := sres.(*ogenclient.GetAuthorizedSignersResponseHeaders)
	if !ok || len(sg.Response.Items) != 1 {
		t.Fatalf("GetAuthorizedSigners = %#v", sres)
	}
	if dob, ok := sg.Response.Items[0].ProtectedPersonalData.Value.DateOfBirth.Get(); !ok || dob.Format("2006-01-02") != "1970-01-31" {
		t.Errorf("signer = %+v", sg.Response.Items[0])
	}
	nres, err := c.GetPerson(t.Context(), ogenclient.GetPersonParams{PersonID: ogenclient.UUID(uuid.NewString())})
	if err != nil {
		t.Fatal(err)
	}
	nf, ok := nres.(*ogenclient.NotFoundHeaders)
	if !ok || nf.Response.Status != 404 || nf.Response.Type != "https://lookup.example/problems/not-found" {
		t.Errorf("GetPerson of nobody = %#v", nres)
	}
}

// TestDocumentIsValid: kin-openapi, a maintained OpenAPI library, loads
// and validates the document (references, schemas, examples), and would
// refuse a broken one.
func TestDocumentIsValid(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "query", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("query/openapi.yaml: %v", err)
	}
	broken, err := loader.LoadFromData([]byte("openapi: 3.1.0\ninfo: {title: x, version: '1'}\npaths:\n  /x:\n    get:\n      responses:\n        '200': {$ref: '#/components/responses/Nope'}\n"))
	if err == nil && broken.Validate(t.Context()) == nil {
		t.Fatal("a document with a dangling reference was accepted: the validator proves nothing")
	}
}
