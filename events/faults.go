package events

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ErrInvalidEvent matches (with errors.Is) every *InvalidEventError.
var ErrInvalidEvent = errors.New("invalid event")

// Is reports whether target is ErrInvalidEvent, so that callers can test
// errors.Is(err, ErrInvalidEvent) without a type assertion.
func (e *InvalidEventError) Is(target error) bool { return target == ErrInvalidEvent }

// jsonFault returns the *InvalidEventError for an error of json.Unmarshal
// reading the body (prefix "") or its data (prefix "data.").
func jsonFault(err error, prefix string) *InvalidEventError {
	var (
		ie *InvalidEventError
		se *jsontext.SyntacticError
		me *json.SemanticError
	)
	switch {
	case errors.As(err, &ie): // from an UnmarshalJSONFrom method below
		return ie
	case errors.As(err, &se) && errors.Is(se.Err, jsontext.ErrDuplicateName):
		return &InvalidEventError{Field: fieldPath(prefix, se.JSONPointer), Reason: "appears more than once"}
	case errors.As(err, &me) && me.JSONPointer == "" && prefix == "":
		return &InvalidEventError{Reason: "body is a JSON " + kindName(me.JSONKind) + ", not an object"}
	case me != nil:
		return &InvalidEventError{Field: fieldPath(prefix, me.JSONPointer),
			Reason: "wrong JSON type: got " + kindName(me.JSONKind) + ", want " + goKindName(me.GoType)}
	}
	// A syntax error: its text names at most one character of a value.
	return &InvalidEventError{Reason: "body is not JSON: " + strings.TrimPrefix(err.Error(), "jsontext: ")}
}

// fieldPath returns the JSON pointer p as a dotted field name after prefix,
// cut to 128 bytes.
func fieldPath(prefix string, p jsontext.Pointer) string {
	f := prefix + strings.Join(slices.Collect(p.Tokens()), ".")
	if len(f) > 128 {
		f = f[:128] + "..."
	}
	return f
}

// kindName names a JSON kind as a JSON Schema type.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// aKind names kind k with its article.
func aKind(k jsontext.Kind) string {
	if k == '{' || k == '[' {
		return "an " + kindName(k)
	}
	return "a " + kindName(k)
}

// goKindName names the JSON type that Go type t reads.
func goKindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Struct:
		return "object"
	}
	return t.Kind().String()
}

// quote returns s quoted for an error reason, cut to 64 bytes so that a
// hostile value cannot bloat logs.
func quote(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + "..."
	}
	return strconv.Quote(s)
}
