package query

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/events"
)

// fakeAuditor is a hand-written Auditor whose behaviour is set per test.
type fakeAuditor struct {
	DiscloseFunc func(ctx context.Context, d events.Disclosure) error
}

func (f *fakeAuditor) Disclose(ctx context.Context, d events.Disclosure) error {
	return f.DiscloseFunc(ctx, d)
}

// newAuditedServer returns a test server over the fixture reader whose
// auditor records the disclosures in *got and answers err.
func newAuditedServer(t *testing.T, tenantClaim string, requirePurpose bool, err error, got *[]events.Disclosure) *Server {
	t.Helper()
	s, nerr := NewServer(Config{
		Reader: fixtureReader(), Tokens: testVerifier(t, testJWKS(t), tenantClaim),
		Now: func() time.Time { return testNow }, RequirePurpose: requirePurpose,
		Auditor: &fakeAuditor{DiscloseFunc: func(_ context.Context, d events.Disclosure) error {
			*got = append(*got, d)
			return err
		}},
	})
	if nerr != nil {
		t.Fatalf("NewServer: %v", nerr)
	}
	return s
}

const (
	signer0 = "00000000-0000-4000-8000-000000000000"
	signer1 = "00000000-0000-4000-8000-000000000001"
	signer3 = "00000000-0000-4000-8000-000000000003"
	signer5 = "00000000-0000-4000-8000-000000000005"
)

func TestAuditRecordsWhatIsDisclosed(t *testing.T) {
	claims := goodClaims("read:persons read:persons:ssn")
	claims["azp"] = "billing-app"
	claims["biz"] = []string{businessA}
	token := rsaToken(t, claims)
	base := "/api/v1/authorized-signers?consumer_id=" + consumerA
	for _, tc := range []struct {
		name, method, query, tenantClaim string
		want                             []events.DisclosedPerson // in the reader's order; nil: no disclosure recorded
		wantTenants                      []string
	}{
		{"no expand", http.MethodGet, "", "", nil, nil},
		{"HEAD sends no body", http.MethodHead, "&expand=PROTECTED_PERSONAL_DATA", "", nil, nil},
		{"LAST4 by default", http.MethodGet, "&expand=PROTECTED_PERSONAL_DATA", "", []events.DisclosedPerson{
			{ID: signer5, DOB: true}, {ID: signer3, SSNMode: "LAST4"},
			{ID: signer1, SSNMode: "LAST4", DOB: true}, {ID: signer0, SSNMode: "LAST4"}}, nil},
		{"FULL", http.MethodGet, "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL", "", []events.DisclosedPerson{
			{ID: signer5, DOB: true}, {ID: signer3, SSNMode: "FULL"},
			{ID: signer1, SSNMode: "FULL", DOB: true}, {ID: signer0, SSNMode: "FULL"}}, nil},
		{"NONE discloses birth dates only", http.MethodGet, "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=NONE", "", []events.DisclosedPerson{
			{ID: signer5, DOB: true}, {ID: signer1, DOB: true}}, nil},
		{"tenancy recorded", http.MethodGet, "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=NONE", "biz", []events.DisclosedPerson{
			{ID: signer5, DOB: true}, {ID: signer1, DOB: true}}, []string{businessA}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []events.Disclosure
			s := newAuditedServer(t, tc.tenantClaim, false, nil, &got)
			req := newRequest(tc.method, base+tc.query, token)
			req.Header.Set("X-Request-Id", "req-7")
			req.Header.Set("Lookup-Purpose", "TREAT")
			rec := serve(t, s, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200: %s", rec.Code, rec.Body)
			}
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("disclosures = %+v, want none", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("got %d disclosures, want 1", len(got))
			}
			want := events.Disclosure{RequestID: "req-7", Subject: "client-42", Client: "billing-app", Tenants: tc.wantTenants,
				Operation: "getAuthorizedSigners", Purpose: "TREAT", Persons: tc.want}
			if !reflect.DeepEqual(got[0], want) {
				t.Errorf("disclosure = %+v\nwant        %+v", got[0], want)
			}
		})
	}
}

func TestAuditFailureDisclosesNothing(t *testing.T) {
	var got []events.Disclosure
	s := newAuditedServer(t, "", false, errors.New("no stream"), &got)
	token := rsaToken(t, goodClaims("read:persons read:persons:ssn"))
	rec := serve(t, s, newRequest(http.MethodGet,
		"/api/v1/authorized-signers?consumer_id="+consumerA+"&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL", token))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("status = %d, want 503", rec.Code)
	}
	if p := decodeProblem(t, rec); p.Type != problemBase+"audit-unavailable" {
		t.Errorf("type = %q, want audit-unavailable", p.Type)
	}
	for _, secret := range []string{"6789", "3333", "4321", "1980", "1990"} {
		if strings.Contains(rec.Body.String(), secret) {
			t.Errorf("503 body %q holds %q", rec.Body, secret)
		}
	}
	// Answers without protected data do not need the ledger.
	rec = serve(t, s, newRequest(http.MethodGet, "/api/v1/authorized-signers?consumer_id="+consumerA, token))
	if rec.Code != http.StatusOK {
		t.Errorf("plain lookup status = %d, want 200", rec.Code)
	}
}

func TestLookupPurposeHeader(t *testing.T) {
	token := rsaToken(t, goodClaims("read:persons"))
	signers := "/api/v1/authorized-signers?consumer_id=" + consumerA
	for _, tc := range []struct {
		name, target   string
		purposes       []string
		requirePurpose bool
		wantStatus     int
		wantReason     string
	}{
		{"absent", signers + "&expand=PROTECTED_PERSONAL_DATA", nil, false, 200, ""},
		{"valid", signers + "&expand=PROTECTED_PERSONAL_DATA", []string{"fraud-review"}, false, 200, ""},
		{"64 characters", signers, []string{strings.Repeat("p", 64)}, false, 200, ""},
		{"65 characters", signers, []string{strings.Repeat("p", 65)}, false, 400, "must be at most 64 characters"},
		{"space", signers, []string{"fraud review"}, false, 400, "must hold only visible ASCII characters"},
		{"non-ASCII", signers, []string{"tr\u00e9at"}, false, 400, "must hold only visible ASCII characters"},
		{"repeated", signers, []string{"a", "b"}, false, 400, reasonRepeated},
		{"on Get Person", "/api/v1/persons/" + consumerA, []string{"a b"}, false, 400, "must hold only visible ASCII characters"},
		{"required and missing", signers + "&expand=PROTECTED_PERSONAL_DATA", nil, true, 400, reasonRequired},
		{"required, missing, no protected data asked", signers, nil, true, 200, ""},
		{"required and given", signers + "&expand=PROTECTED_PERSONAL_DATA", []string{"TREAT"}, true, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []events.Disclosure
			s := newAuditedServer(t, "", tc.requirePurpose, nil, &got)
			req := newRequest(http.MethodGet, tc.target, token)
			for _, p := range tc.purposes {
				req.Header.Add("Lookup-Purpose", p)
			}
			rec := serve(t, s, req)
			if rec.Code != tc.wantStatus {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tc.wantStatus, rec.Body)
			}
			if tc.wantStatus != 400 {
				return
			}
			p := decodeProblem(t, rec)
			want := []invalidParam{{Name: "Lookup-Purpose", Reason: tc.wantReason}}
			if !reflect.DeepEqual(p.InvalidParams, want) {
				t.Errorf("invalid_params = %+v, want %+v", p.InvalidParams, want)
			}
			if len(got) != 0 {
				t.Errorf("a refused request was recorded: %+v", got)
			}
		})
	}
}
