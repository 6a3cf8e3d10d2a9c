// Package officer is the privacy officer's pages of the accounting
// service: the accounting of disclosures in words, over the accounting
// index (internal/accounting), for the officer who answers a person's
// request (docs/audit.md, "How an officer answers a request"):
//
//   - officer.go: the handler (New, Config) and its routes, the headers of
//     every answer, the authorization and the recording of each view;
//     form.go and rows.go: one person's disclosures, page by page, and
//     their CSV export (GET /officer/person, /officer/person.csv);
//     erasure.go: the person page's section "Erasure", what the erasure
//     bucket's evidence says of the person's deletion (Config.Erasure);
//   - recipient.go, recipient_rows.go: what one recipient (a client, a
//     token's subject) was disclosed over every person (GET
//     /officer/recipient, /officer/recipient.csv);
//   - letter.go: the accounting given to the person, a letter to print
//     (GET and POST /officer/letter) under the covered entity's
//     letterhead (Config.Letterhead);
//   - web/: the templates and stylesheets, embedded; no script.
//
// Its contract: it reads the index, the registries (recipients and
// purposes named in words) and the erasure's evidence, never writes the
// index; each view or export
// is recorded in the audit ledger as a read of each person it shows
// (Config.Record, accounting.LedgerRecorder) before it is answered, and
// shows nothing when it cannot be; forms posted from another site are
// refused. Its tests drive the pages in headless Chromium too
// (*_browser_test.go), whose screenshots are docs/images/officer-*.png.
package officer
