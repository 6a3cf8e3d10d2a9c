// Package accountingtest is the test support of the accounting service's
// rooms (internal/accounting, internal/accounting/fhir,
// internal/accounting/officer), written once here rather than in each:
//
//   - index.go: ledgers written through the real ledger (WriteLedger, 1 to
//     3 of Persons an answer), an index opened for a test (OpenIndex),
//     following the stream until caught up (Follow, CaughtUp), and every
//     page of a search (SearchAll, IDs);
//   - fixture.go: the officer's fixture, 60 disclosures of known clients,
//     subjects and purposes (Disclosures, Clients, Purposes), written and
//     indexed (FixtureIndex), and the registries shipped in
//     deploy/registries (ShippedRegistry);
//   - http.go: a fake of auth.Authenticator's admission (Authorize, by
//     the tokens "auditor", "officer" and "reader") and a GET of a handler
//     (Get);
//   - compare.go: the index held to its stream (Digest, ScanDigest,
//     IndexDigest) and the FHIR search's client (SearchClient), for the
//     load tool, which reaches the service's internals through test
//     support alone.
//
// Its contract: it builds on the accounting's public API only (the
// internal/accounting tests that need more are in package accounting);
// every ledger runs on an in-process NATS server of testkit. Imported by
// test files and the load tool only.
package accountingtest
