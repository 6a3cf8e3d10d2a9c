package officer

import (
	"encoding/csv"
	"net/http"
	"strings"
	"time"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
)

// recipientData is what the page of the search by recipient shows.
type recipientData struct {
	Form              recipientForm
	Clients, Purposes []option // the registries' codes, for the form
	Error             string
	Searched          bool
	Rows              []row           // with their Person
	Recipients        []recipientLine // who the rows' clients were, each once
	Next, First, CSV  string          // addresses of the next and first pages, and of the export
	Generated         string
	LedgerSince       string
	Status            *accounting.IndexStatus
	Hidden            hidden // counted when no row is shown
}

// recipientLine is a client of the rows shown, as the clients registry
// names it at the rows' dates (Organisation "" when it lacks the
// client), with the dates of its first and last rows.
type recipientLine struct {
	Client, Organisation, Address string
	First, Last                   string // dates, YYYY-MM-DD
}

// recipientFormData returns the page's data with the registries'
// choices.
func (o *officer) recipientFormData() recipientData {
	pd := o.formData()
	return recipientData{Clients: pd.Clients, Purposes: pd.Purposes}
}

// recipientStatus fills in how current the index is and when the page
// was made.
func (o *officer) recipientStatus(d *recipientData) {
	if o.Status != nil {
		s := o.Status()
		d.Status = &s
		if !s.LedgerSince.IsZero() {
			d.LedgerSince = s.LedgerSince.Format(time.DateOnly)
		}
	}
	d.Generated = o.Now().UTC().Format("2006-01-02 15:04:05 UTC")
}

// recipientRows returns recs in words (counting the unknown codes), and
// the recipients they were disclosed to: each client with the
// organisation and address the registry gives at the rows' dates, once
// for each (client, organisation, address), in the order of the rows.
func (o *officer) recipientRows(recs []ledger.Record) ([]row, []recipientLine) {
	rows := o.rows(recs)
	var lines []recipientLine
	at := map[recipientLine]int{} // its index in lines, by client, organisation and address
	for i := range recs {
		day := recs[i].Time.UTC().Format(time.DateOnly)
		k := recipientLine{Client: rows[i].Client, Organisation: rows[i].Organisation, Address: rows[i].Address}
		j, ok := at[k]
		if !ok {
			j, at[k] = len(lines), len(lines)
			k.Last = day // rows are newest first
			lines = append(lines, k)
		}
		lines[j].First = day
	}
	return rows, lines
}

// recipientExport answers the CSV of the search by recipient: every
// matching row, not a page.
func (o *officer) recipientExport(w http.ResponseWriter, r *http.Request) {
	caller, ok := o.authorizeRecipient(w, r)
	if !ok {
		return
	}
	d := o.recipientFormData()
	f, err := parseRecipient(r.URL.Query(), o.Registry)
	d.Form = f
	if err == nil && !f.searched() {
		err = badInput("A client or a subject is required.")
	}
	var recs []ledger.Record
	if err == nil {
		recs, err = everyPage(f.After, func(after string) ([]ledger.Record, string, error) {
			q := f.recipientQuery(1000)
			q.After = after
			return o.Index.SearchRecipient(q, f.keep(o.Registry))
		}, "narrow its dates.")
	}
	if err != nil {
		o.failRecipient(w, d, err)
		return
	}
	if !o.recordPersons(w, r, d, caller, recs, accounting.OperationExportRecipient) {
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="accounting-recipient-`+fileSafe(f.Client+"-"+f.Subject)+`-`+o.Now().UTC().Format("20060102")+`.csv"`)
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"date", "person", "client", "organisation", "address", "subject", "disclosed", "purpose", "exempt", "reference", "caller_request_id", "replica"})
	rows, _ := o.recipientRows(recs)
	for _, x := range rows {
		_ = cw.Write(csvCells(x.Date, x.Person, orNone(x.Client, noClient), x.Organisation, x.Address, orNone(x.Subject, noSubject), x.Disclosed, x.Purpose, x.accountability(), x.Reference, x.RequestID, x.Replica))
	}
	cw.Flush()
}

// fileSafe returns s with every character but ASCII letters, digits,
// '.', '_' and '-' replaced by '_', and no '-' at either end: a part of a
// file name.
func fileSafe(s string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s), "-")
}
