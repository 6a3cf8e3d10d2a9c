package client_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/query"
	"go.yaml.in/yaml/v3"
)

// schema is the part of an OpenAPI schema the test compares.
type schema struct {
	Required   []string          `yaml:"required"`
	Properties map[string]schema `yaml:"properties"`
	Ref        string            `yaml:"$ref"`
	Type       string            `yaml:"type"`
	Enum       []string          `yaml:"enum"`
	Items      *schema           `yaml:"items"`
}

func openAPISchemas(t *testing.T) map[string]schema {
	t.Helper()
	var doc struct {
		Components struct {
			Schemas map[string]schema `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(query.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Components.Schemas
}

// TestTypesMatchOpenAPI holds each of the client's types to its schema in
// query/openapi.yaml: the same JSON names, a required property never
// omitted, an optional one omitted when empty, and an object for a $ref.
func TestTypesMatchOpenAPI(t *testing.T) {
	schemas := openAPISchemas(t)
	for name, typ := range map[string]reflect.Type{
		"Person":                reflect.TypeFor[client.Person](),
		"AuthorizedSigner":      reflect.TypeFor[client.AuthorizedSigner](),
		"Address":               reflect.TypeFor[client.Address](),
		"Phone":                 reflect.TypeFor[client.Phone](),
		"ProtectedPersonalData": reflect.TypeFor[client.Protected](),
		"ProblemDetails":        reflect.TypeFor[client.Problem](),
		"InvalidParam":          reflect.TypeFor[client.InvalidParam](),
	} {
		t.Run(name, func(t *testing.T) {
			s, ok := schemas[name]
			if !ok {
				t.Fatalf("openapi.yaml has no schema %s", name)
			}
			fields := map[string]reflect.StructField{}
			for f := range typ.Fields() {
				tag := f.Tag.Get("json")
				if tag == "-" || tag == "" {
					continue
				}
				fields[strings.Split(tag, ",")[0]] = f
			}
			for prop, ps := range s.Properties {
				f, ok := fields[prop]
				if !ok {
					t.Errorf("property %s has no field", prop)
					continue
				}
				omit := strings.Contains(f.Tag.Get("json"), "omitempty")
				required := slices.Contains(s.Required, prop)
				if required == omit && name != "ProblemDetails" {
					t.Errorf("property %s: required %v, but the field's omitempty is %v", prop, required, omit)
				}
				if ref := schemas[strings.TrimPrefix(ps.Ref, "#/components/schemas/")]; ps.Ref != "" && ref.Type == "object" && f.Type.Kind() != reflect.Pointer {
					t.Errorf("property %s is an object (%s) but its field is %s", prop, ps.Ref, f.Type)
				}
				delete(fields, prop)
			}
			for prop := range fields {
				t.Errorf("field for %s, which the schema lacks", prop)
			}
		})
	}
}

// TestSentinelsMatchOpenAPI: one sentinel per problem type the document
// lists, and none that it does not.
func TestSentinelsMatchOpenAPI(t *testing.T) {
	want := openAPISchemas(t)["ProblemDetails"].Properties["type"].Enum
	got := []string{}
	for _, e := range []client.ProblemType{
		client.ErrInvalidParameters, client.ErrUnauthorized, client.ErrInsufficientScope, client.ErrForbidden,
		client.ErrNotFound, client.ErrRouteNotFound, client.ErrMethodNotAllowed, client.ErrNotAcceptable,
		client.ErrInternal, client.ErrNotReady, client.ErrAuditUnavailable, client.ErrPositionNotReached, client.ErrStale,
	} {
		got = append(got, string(e))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("sentinels %v\nopenapi.yaml %v", got, want)
	}
}

// TestEnumsMatchOpenAPI: the client's enum constants are the document's.
func TestEnumsMatchOpenAPI(t *testing.T) {
	s := openAPISchemas(t)
	if got, want := []string{string(client.Consumer), string(client.BusinessContact)}, s["Person"].Properties["type"].Enum; !slices.Equal(got, want) {
		t.Errorf("person types %v, openapi.yaml %v", got, want)
	}
	for prop, got := range map[string][]string{
		"account_access": strs(client.AccountAccessNone, client.AccountAccessPHI, client.AccountAccessPHIAndAccountUpdates, client.AccountAccessUnspecified),
		"status":         strs(client.SignerStatusActive, client.SignerStatusInactive, client.SignerStatusPending, client.SignerStatusArchived),
		"type": strs(client.SignerTypeAuthorizedSigner, client.SignerTypePowerOfAttorney, client.SignerTypeAuthorizedRepresentative,
			client.SignerTypeGuardian, client.SignerTypeParent, client.SignerTypeConservator),
	} {
		if want := s["AuthorizedSigner"].Properties[prop].Enum; !slices.Equal(got, want) {
			t.Errorf("signer %s %v, openapi.yaml %v", prop, got, want)
		}
	}
	for name, f := range map[string]reflect.Type{
		"AccountAccess": reflect.TypeFor[client.AccountAccess](),
		"Status":        reflect.TypeFor[client.SignerStatus](),
		"Type":          reflect.TypeFor[client.SignerType](),
	} {
		if field, _ := reflect.TypeFor[client.AuthorizedSigner]().FieldByName(name); field.Type != f {
			t.Errorf("AuthorizedSigner.%s is a %v, want %v", name, field.Type, f)
		}
	}
}

func strs[T ~string](vs ...T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
