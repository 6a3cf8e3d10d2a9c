package query

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	vErrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
)

var (
	oaOnce      sync.Once
	oaValidator validator.Validator
	oaErr       []error
)

// openAPIValidator returns the validator of the embedded document.
func openAPIValidator(t *testing.T) validator.Validator {
	t.Helper()
	oaOnce.Do(func() {
		doc, err := libopenapi.NewDocument(openAPIDoc)
		if err != nil {
			oaErr = []error{err}
			return
		}
		oaValidator, oaErr = validator.NewValidator(doc)
	})
	if len(oaErr) > 0 {
		t.Fatalf("openapi.yaml: %v", oaErr)
	}
	return oaValidator
}

// validateExchange fails t if the response rec to req does not match
// openapi.yaml: status, headers and body.
func validateExchange(t *testing.T, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	v := openAPIValidator(t)
	resp := rec.Result()
	// The validator reads the request URL and method only.
	vreq := req.Clone(req.Context())
	ok, errs := v.ValidateHttpResponse(vreq, resp)
	if !ok && onlyPathErrors(errs) && (rec.Code == 404 || rec.Code == 405) {
		// The document cannot describe paths and methods that do not
		// exist. Their answers (404 and 405, which come before every other
		// check) are checked as the same status of
		// GET /api/v1/persons/{person_id}, whose responses document them:
		// ProblemDetails body and the required headers.
		vreq = httptest.NewRequest(http.MethodGet, "/api/v1/persons/"+consumerA, nil)
		ok, errs = v.ValidateHttpResponse(vreq, rec.Result())
	}
	if !ok {
		var b strings.Builder
		for _, e := range errs {
			b.WriteString("\n  " + e.Message + ": " + e.Reason)
			for _, se := range e.SchemaValidationErrors {
				b.WriteString("\n    " + se.Reason + " at " + se.FieldPath)
			}
		}
		t.Errorf("%s %s -> %d: response does not match openapi.yaml:%s\nbody: %s", req.Method, req.URL, rec.Code, b.String(), rec.Body.String())
	}
}

// onlyPathErrors reports whether every error says the path or method is
// not in the document.
func onlyPathErrors(errs []*vErrors.ValidationError) bool {
	for _, e := range errs {
		if e.ValidationType != helpers.PathValidation {
			return false
		}
	}
	return len(errs) > 0
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	v := openAPIValidator(t)
	if ok, errs := v.ValidateDocument(); !ok {
		for _, e := range errs {
			t.Errorf("openapi.yaml: %s: %s", e.Message, e.Reason)
		}
	}
}

// TestValidatorCatchesDrift proves the exchange validation can fail: answers
// that break the document are reported.
func TestValidatorCatchesDrift(t *testing.T) {
	v := openAPIValidator(t)
	tests := []struct {
		name    string
		target  string
		status  int
		ctype   string
		body    string
		noCache bool
	}{
		{"person without Cache-Control", "/api/v1/persons/" + consumerA, 200, "application/json",
			`{"person_id":"` + consumerA + `","business_id":"` + businessA + `","first_name":"A","last_name":"B","type":"CONSUMER"}`, true},
		{"person with null middle_name", "/api/v1/persons/" + consumerA, 200, "application/json",
			`{"person_id":"` + consumerA + `","business_id":"` + businessA + `","first_name":"A","middle_name":null,"last_name":"B","type":"CONSUMER"}`, false},
		{"person with bad type", "/api/v1/persons/" + consumerA, 200, "application/json",
			`{"person_id":"` + consumerA + `","business_id":"` + businessA + `","first_name":"A","last_name":"B","type":"ROBOT"}`, false},
		{"person with extra field", "/api/v1/persons/" + consumerA, 200, "application/json",
			`{"person_id":"` + consumerA + `","business_id":"` + businessA + `","first_name":"A","last_name":"B","type":"CONSUMER","ssn":"1"}`, false},
		{"signers without items", "/api/v1/authorized-signers?consumer_id=" + consumerA, 200, "application/json", `{}`, false},
		{"problem with unknown type", "/api/v1/persons/x", 404, "application/problem+json",
			`{"type":"about:blank","title":"t","status":404,"detail":"d","instance":"/api/v1/persons/x"}`, false},
		{"400 without invalid_params", "/api/v1/persons/x", 400, "application/problem+json",
			`{"type":"https://lookup.example/problems/invalid-parameters","title":"t","status":400,"detail":"d","instance":"/x"}`, false},
		{"503 without Retry-After", "/api/v1/persons/" + consumerA, 503, "application/problem+json",
			`{"type":"https://lookup.example/problems/not-ready","title":"t","status":503,"detail":"d","instance":"/x"}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tc.target, nil)
			rec := httptest.NewRecorder()
			rec.Header().Set("Content-Type", tc.ctype)
			if !tc.noCache {
				rec.Header().Set("Cache-Control", "no-store")
			}
			rec.Header().Set("X-Request-Id", "r1")
			rec.WriteHeader(tc.status)
			_, _ = rec.WriteString(tc.body)
			if ok, _ := v.ValidateHttpResponse(req, rec.Result()); ok {
				t.Errorf("validator accepted a response that breaks openapi.yaml: %s", tc.body)
			}
		})
	}
}

// TestProblemKindsDocumented holds the problem table and openapi.yaml in
// step: every kind is in the ProblemDetails type enum and in the table of
// the description with its status, and the enum has no other entry.
func TestProblemKindsDocumented(t *testing.T) {
	doc := string(openAPIDoc)
	for k := range problemKinds {
		kind := problemKind(k)
		uri := kind.TypeURI()
		if !strings.Contains(doc, "            - "+uri+"\n") {
			t.Errorf("%s is not in the ProblemDetails type enum", uri)
		}
		row := "| `" + uri + "` | " + strconv.Itoa(problemKinds[k].Status) + " |"
		if !strings.Contains(doc, row) {
			t.Errorf("openapi.yaml lacks the row %q", row)
		}
	}
	if n := strings.Count(doc, "            - "+problemBase); n != len(problemKinds) {
		t.Errorf("type enum has %d entries, want %d", n, len(problemKinds))
	}
}
