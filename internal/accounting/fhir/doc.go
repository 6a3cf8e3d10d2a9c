// Package fhir is the accounting service's FHIR face, over the
// accounting index (internal/accounting):
//
//   - http.go: the search of one person's disclosures, GET
//     /fhir/AuditEvent (NewHandler), answered as a FHIR R4 searchset
//     Bundle or as JSON lines, page by page, errors as
//     OperationOutcomes;
//   - auditevent.go: ledger records rendered as AuditEvents shaped as IHE
//     BALP's patient-read pattern (FHIRBundle, the resource types), which
//     lookupd audit --person --format fhir writes too;
//   - client.go: the client of that search (Client, ReadTokenFile), for
//     lookupd audit --person with LOOKUP_ACCOUNTING_URL.
//
// Its contract: it reads the index and never writes it; a search is
// recorded in the audit ledger (HandlerConfig.Record,
// accounting.LedgerRecorder) before anything is answered, and one that
// cannot be recorded discloses nothing (503); the caller is admitted in
// front of it (auth.Authenticator) and read with
// accounting.AuthenticatedCaller.
package fhir
