package query

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
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
	if ok, errs := v.ValidateHttpResponse(vreq, resp); !ok {
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

func TestOpenAPIDocumentIsValid(t *testing.T) {
	v := openAPIValidator(t)
	if ok, errs := v.ValidateDocument(); !ok {
		for _, e := range errs {
			t.Errorf("openapi.yaml: %s: %s", e.Message, e.Reason)
		}
	}
}
