package officer

import (
	"encoding/csv"
	"errors"
	"net/http"
	"strings"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
)

// pageData is what the officer's page shows.
type pageData struct {
	Form              officerForm
	Clients, Purposes []option // the registries' codes, for the form
	Error             string
	Searched          bool
	Rows              []row
	Next, First, CSV  string // addresses of the next and first pages, and of the export
	Letter            string // address of the letter's form
	Oldest, Generated string
	LedgerSince       string
	Status            *accounting.IndexStatus
	Hidden            hidden          // counted when no row is shown
	Erasure           *erasureSection // nil: not shown (erasure.go)
}

// option is a choice of the form's lists.
type option struct{ Value, Label string }

// row is one disclosure, in words.
type row struct {
	Date                           string
	Organisation, Address          string // "" when the registry lacks the client at that date
	Client, Subject                string
	Disclosed                      string
	Purpose                        string // the statement, or what is unknown
	PurposeUnknown, Exempt, Access bool
	Reference                      string // the service's (accounting.Reference)
	RequestID, Replica             string // the caller's X-Request-Id, as it sent it
	Person                         string // the person disclosed (a column of the search by recipient only)
}

// formData returns the page's data with the registries' choices.
func (o *officer) formData() pageData {
	var d pageData
	for _, id := range o.Registry.ClientIDs() {
		label := id
		if c, ok := o.Registry.Client(id, o.Now()); ok {
			label = c.Organisation + " (" + id + ")"
		}
		d.Clients = append(d.Clients, option{id, label})
	}
	for _, code := range o.Registry.PurposeCodes() {
		p, _ := o.Registry.Purpose(code)
		d.Purposes = append(d.Purposes, option{code, p.Statement + " (" + code + ")"})
	}
	return d
}

// rows returns recs in words, counting the unknown codes.
func (o *officer) rows(recs []ledger.Record) []row {
	out := make([]row, len(recs))
	for i := range recs {
		r := &recs[i]
		w := row{Date: r.Time.UTC().Format("2006-01-02 15:04:05 UTC"), Client: r.Client, Subject: r.Subject, Person: r.PersonID,
			Disclosed: disclosed(r), Reference: accounting.Reference(r), RequestID: r.RequestID, Replica: r.Replica, Access: accounting.IsAccountingRead(r.Operation)}
		if c, ok := o.Registry.Client(r.Client, r.Time); ok {
			w.Organisation, w.Address = c.Organisation, c.Address
		} else if r.Client != "" {
			o.unknown.WithLabelValues("client").Inc()
		}
		switch p, ok := o.Registry.Purpose(r.Purpose); {
		case ok:
			w.Purpose, w.Exempt = p.Statement, p.Exempt
		case r.Purpose == "":
			w.Purpose = "no purpose given"
		default:
			w.Purpose, w.PurposeUnknown = "unknown purpose code "+r.Purpose, true
			o.unknown.WithLabelValues("purpose").Inc()
		}
		out[i] = w
	}
	return out
}

// disclosed says in words what r disclosed.
func disclosed(r *ledger.Record) string {
	var what []string
	switch r.SSNMode {
	case "":
	case "LAST4":
		what = append(what, "social security number (last four digits)")
	case "MASKED":
		what = append(what, "social security number (masked but for the last four digits)")
	case "FULL":
		what = append(what, "social security number (whole)")
	default:
		what = append(what, "social security number ("+r.SSNMode+")")
	}
	if r.DOBDisclosed {
		what = append(what, "date of birth")
	}
	switch {
	case len(what) > 0:
		return strings.Join(what, ", ")
	case r.Operation == accounting.OperationProvide:
		return "this accounting of disclosures, given to the person (their request of " + r.Requested + ")"
	case accounting.IsAccountingRead(r.Operation):
		return "this accounting of disclosures (who read it)"
	}
	return "no protected field"
}

// maxExport bounds the rows of a CSV export, or of a letter.
const maxExport = 100_000

// everyPage returns every record of a search, following its pages from
// the one after the cursor first ("": the first page): page returns the
// page after a cursor and the next cursor. A cursor the index did not give is bad input, and so
// is a search of more than maxExport records (tooMany says what to do).
func everyPage(first string, page func(after string) ([]ledger.Record, string, error), tooMany string) ([]ledger.Record, error) {
	var recs []ledger.Record
	for after := first; ; {
		p, next, err := page(after)
		switch {
		case errors.Is(err, accounting.ErrBadCursor):
			return nil, badInput("after: not a page this service gave.")
		case err != nil:
			return nil, err
		}
		recs = append(recs, p...)
		if next == "" {
			return recs, nil
		}
		if len(recs) >= maxExport {
			return nil, badInputf("The search holds more than %d disclosures: %s", maxExport, tooMany)
		}
		after = next
	}
}

// export answers the CSV of the search: every matching row, not a page.
func (o *officer) export(w http.ResponseWriter, r *http.Request) {
	caller, ok := o.authorize(w, r)
	if !ok {
		return
	}
	d := o.formData()
	f, err := parseOfficer(r.URL.Query(), o.Registry)
	d.Form = f
	if err == nil && f.ID == "" {
		err = badInput("A person id is required.")
	}
	var recs []ledger.Record
	if err == nil {
		recs, err = everyPage(f.After, func(after string) ([]ledger.Record, string, error) {
			q := f.query(1000)
			q.After = after
			return o.Index.SearchFunc(q, f.keep(o.Registry))
		}, "narrow its dates.")
	}
	if err != nil {
		o.fail(w, d, err)
		return
	}
	if !o.record(w, r, caller, f.ID, accounting.OperationExport) {
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="accounting-`+f.ID+`-`+o.Now().UTC().Format("20060102")+`.csv"`)
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"date", "organisation", "address", "client", "subject", "disclosed", "purpose", "exempt", "reference", "caller_request_id", "replica"})
	for _, x := range o.rows(recs) {
		_ = cw.Write(csvCells(x.Date, x.Organisation, x.Address, orNone(x.Client, noClient), orNone(x.Subject, noSubject), x.Disclosed, x.Purpose, x.accountability(), x.Reference, x.RequestID, x.Replica))
	}
	cw.Flush()
}

// csvCells returns cells made safe for a spreadsheet (OWASP, CSV
// injection): a cell starting with =, +, -, @, a tab or a carriage return
// is prefixed with a single quote, so that it is never run as a formula.
func csvCells(cells ...string) []string {
	for i, c := range cells {
		if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
			cells[i] = "'" + c
		}
	}
	return cells
}

// accountability is what the CSV's column "exempt" says of x: a read of
// the accounting itself (never an accountable disclosure, whatever its
// purpose), an exempt disclosure (164.528(a)(1)), or an accountable one.
func (x row) accountability() string {
	switch {
	case x.Access:
		return "read of the accounting"
	case x.Exempt:
		return "exempt"
	}
	return "accountable"
}

// What a CSV cell says of a disclosure whose token named no client (no
// azp, no client_id) or no subject: words with a space, which no client
// id or subject the service takes (a code) can be, so that a client
// named "none" stays "none".
const (
	noClient  = "(no client)"
	noSubject = "(no subject)"
)

// orNone returns s, or none when s is "".
func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}
