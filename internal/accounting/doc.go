// Package accounting is the accounting of disclosures as a read model of
// the audit ledger: a projection of the audit stream into a Badger store of
// its own, indexed by person and time, so that one person's disclosures are
// a range read rather than a scan of the whole stream, and by client and
// by subject, so that what one recipient was disclosed is a range read too.
// Like the read model of persons, it keeps the stream position it has
// applied in the same transaction as the records (a crash loses nothing and
// applies nothing twice), it keeps the identity of the stream it was built
// from (a stream deleted and created again, or another stream, empties it,
// to be rebuilt from the stream found), and it can always be rebuilt by
// deleting it: the stream is the source.
//
//   - The index: index.go (Open, Apply, the keys and the format), value.go
//     (a record's compact value), search.go (Search: one person's records,
//     page by page), recipient.go (SearchRecipient: a client's or a
//     subject's), codes.go (the codes of every record, Oldest),
//     compare.go (Digest, CompareWithStream: the index held to a full scan
//     of the stream), identity.go (the stream it was built from),
//     memory.go (Badger sized to a memory budget).
//   - Following the ledger stream: follow.go (Follow, one pass, watching
//     that the stream is not replaced under it), follower.go
//     (Follower: again after a failure, with backoff; readiness and the
//     officer's status), metrics.go.
//   - The registries: registry.go (the clients and purposes a privacy
//     office names, LoadRegistry, Check).
//   - What both servers over it share, record.go: the scope, an Access and
//     its record in the ledger itself (LedgerRecorder: a read of the
//     accounting is a disclosure too), the caller's purpose and request id.
//
// The servers over it are rooms of their own: internal/accounting/fhir (the
// FHIR AuditEvent search, and its client) and internal/accounting/officer
// (the privacy officer's pages). lookupd audit serve wires the three.
package accounting
