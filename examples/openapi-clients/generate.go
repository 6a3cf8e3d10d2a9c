// Package openapiclients holds the Go clients that the two generators Go
// teams use, oapi-codegen and ogen, generate from the lookup API's
// OpenAPI document (query/openapi.yaml) at their defaults, and the test
// that they compile and call the service: a person, a
// consumer's signers with their protected data, a 404 problem. It is a
// module of its own, so that the service's go.mod does not carry the
// generators. They are generated, not committed: go generate ./... here
// (make clients; make test and make lint do it first).
//
// Files: generate.go, oapi-codegen.yaml (its configuration: the
// defaults of a client), clients_test.go; oapiclient/ and ogenclient/ are
// generated (and ignored by git).
package openapiclients

//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../../query/openapi.yaml
//go:generate go tool ogen --target ogenclient --package ogenclient --clean ../../query/openapi.yaml
