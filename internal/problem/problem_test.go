package problem

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestEveryKindHasARow: each kind has its slug, title and status, and no
// two kinds share a type URI.
func TestEveryKindHasARow(t *testing.T) {
	seen := map[string]Kind{}
	for k := InvalidParams; k <= Stale; k++ {
		info := Kinds[k]
		if info.Slug == "" || info.Title == "" || info.Status < 400 {
			t.Errorf("kind %d: %+v, want a slug, a title and an error status", k, info)
		}
		if prev, ok := seen[k.TypeURI()]; ok {
			t.Errorf("kinds %d and %d share %s", prev, k, k.TypeURI())
		}
		seen[k.TypeURI()] = k
	}
	if len(seen) != len(Kinds) {
		t.Errorf("%d kinds named, the table has %d rows", len(seen), len(Kinds))
	}
}

// TestWrite: the body decodes as the RFC 9457 members, the headers name
// it, and a HEAD gets the headers alone.
func TestWrite(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		t.Run(method, func(t *testing.T) {
			rec := httptest.NewRecorder()
			params := []InvalidParam{{Name: "ssn_mode", Reason: `must be "FULL" or "LAST4"`}}
			Write(rec, httptest.NewRequest(method, "/api/v1/persons/x%2Fy", nil), InvalidParams, "bad \"input\"", params)
			if rec.Code != 400 || rec.Header().Get("Content-Type") != "application/problem+json" {
				t.Fatalf("%d %q, want 400 application/problem+json", rec.Code, rec.Header().Get("Content-Type"))
			}
			if method == http.MethodHead {
				if rec.Body.Len() != 0 || rec.Header().Get("Content-Length") == "0" {
					t.Fatalf("HEAD: body %q, Content-Length %s", rec.Body, rec.Header().Get("Content-Length"))
				}
				return
			}
			var got struct {
				Type, Title, Detail, Instance string
				Status                        int
				InvalidParams                 []InvalidParam `json:"invalid_params"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Type != Base+"invalid-parameters" || got.Status != 400 || got.Detail != `bad "input"` ||
				got.Instance != "/api/v1/persons/x%2Fy" || len(got.InvalidParams) != 1 || got.InvalidParams[0] != params[0] {
				t.Errorf("body = %+v", got)
			}
		})
	}
}
