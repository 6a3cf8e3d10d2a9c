package officer

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/ledger"
)

// The officer's search by recipient: what a client, or a token's
// subject, was disclosed over a span of days, every person's records
// together, from the index by client and by subject (accounting.Index.SearchRecipient).
//
//	GET /officer/recipient?client=<client id>&subject=<sub>&from=YYYY-MM-DD&to=YYYY-MM-DD&purpose=<code>&exempt=1&self=1&after=<cursor>
//	GET /officer/recipient.csv?<the same>

var recipientTemplate = template.Must(template.New("recipient.html").ParseFS(webFiles, "web/recipient.html"))

// recipientForm is the search by recipient, as its form sends it: a
// client, a subject or both, and the person page's filters (its ID and
// Recipient unused).
type recipientForm struct {
	officerForm
	Client, Subject string
}

// recipientParams are the parameters of the search by recipient.
var recipientParams = []string{"client", "subject", "from", "to", "purpose", "exempt", "self", "after"}

// parseRecipient returns the search of v, or a badInput saying what is
// wrong. No parameter but empty ones is the empty form. A client must be
// one the registry knows when it knows any; a client and a subject are
// codes (1 to 64 visible ASCII characters).
func parseRecipient(v url.Values, reg *accounting.Registry) (recipientForm, error) {
	var f recipientForm
	for k, vs := range v {
		if !slices.Contains(recipientParams, k) {
			return f, badInputf("%q is not a field of this search (%s).", k, strings.Join(recipientParams, ", "))
		}
		if len(vs) > 1 {
			return f, badInputf("%q is given more than once.", k)
		}
	}
	f.Client, f.Subject = strings.TrimSpace(v.Get("client")), strings.TrimSpace(v.Get("subject"))
	f.From, f.To, f.Purpose, f.After = v.Get("from"), v.Get("to"), v.Get("purpose"), v.Get("after")
	var err error
	if f.Exempt, err = checkbox(v, "exempt"); err != nil {
		return f, err
	}
	if f.Self, err = checkbox(v, "self"); err != nil {
		return f, err
	}
	if f.Client == "" && f.Subject == "" {
		if f.From != "" || f.To != "" || f.Purpose != "" || f.After != "" || f.Exempt || f.Self {
			return f, badInput("A client or a subject is required.")
		}
		return f, nil
	}
	if f.Client != "" && !accounting.IsCode(f.Client) {
		return f, badInputf("The client %q is not a client id: want 1 to 64 visible ASCII characters.", f.Client)
	}
	if f.Client != "" && len(reg.ClientIDs()) > 0 && !reg.HasClient(f.Client) {
		return f, badInputf("The client %q is not a client of the clients registry.", f.Client)
	}
	if f.Subject != "" && !accounting.IsCode(f.Subject) {
		return f, badInputf("The subject %q is not a token's subject: want 1 to 64 visible ASCII characters.", f.Subject)
	}
	if err := f.dates(); err != nil {
		return f, err
	}
	return f, f.codes(reg) // the purpose (Recipient is "")
}

// searched reports whether f is a search (not the empty form).
func (f recipientForm) searched() bool { return f.Client != "" || f.Subject != "" }

// recipientQuery returns the index query of f, pages of limit records.
func (f recipientForm) recipientQuery(limit int) accounting.RecipientQuery {
	return accounting.RecipientQuery{Client: f.Client, Subject: f.Subject, Since: f.since, Until: f.until, After: f.After, Limit: limit}
}

// url returns the address of path with f's search, at the page after
// cursor ("" for the first).
func (f recipientForm) url(path, cursor string) string {
	v := url.Values{}
	for k, s := range map[string]string{"client": f.Client, "subject": f.Subject, "from": f.From, "to": f.To, "purpose": f.Purpose, "after": cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if f.Exempt {
		v.Set("exempt", "1")
	}
	if f.Self {
		v.Set("self", "1")
	}
	return (&url.URL{Path: path, RawQuery: v.Encode()}).String()
}

// recipient answers a page of the search by recipient.
func (o *officer) recipient(w http.ResponseWriter, r *http.Request) {
	caller, ok := o.authorizeRecipient(w, r)
	if !ok {
		return
	}
	d := o.recipientFormData()
	f, err := parseRecipient(r.URL.Query(), o.Registry)
	d.Form = f
	if err == nil && !f.searched() {
		o.renderRecipient(w, http.StatusOK, d) // the empty form
		return
	}
	var recs []ledger.Record
	var next string
	if err == nil {
		recs, next, err = o.Index.SearchRecipient(f.recipientQuery(o.PageSize), f.keepCounting(o.Registry, &d.Hidden))
		if errors.Is(err, accounting.ErrBadCursor) {
			err = badInput("after: not a page this service gave; start again from the first page")
		}
	}
	if err != nil {
		o.failRecipient(w, d, err)
		return
	}
	if !o.recordPersons(w, r, d, caller, recs, accounting.OperationViewRecipient) {
		return
	}
	d.Searched = true
	d.Rows, d.Recipients = o.recipientRows(recs)
	if next != "" {
		d.Next = f.url("/officer/recipient", next)
	}
	if f.After != "" {
		d.First = f.url("/officer/recipient", "")
	}
	d.CSV = f.url("/officer/recipient.csv", "")
	o.recipientStatus(&d)
	o.renderRecipient(w, http.StatusOK, d)
}

// authorizeRecipient is authorize for the search by recipient: it answers
// 401 or 403 on its page, which shows nothing of the registries (no
// client, organisation or purpose to one refused).
func (o *officer) authorizeRecipient(w http.ResponseWriter, r *http.Request) (auth.Caller, bool) {
	var d recipientData
	c, err := o.Authorize(r)
	switch {
	case errors.Is(err, accounting.ErrForbidden):
		d.Error = "This token does not allow reading the accounting of disclosures (scope read:audit)."
		o.renderRecipient(w, http.StatusForbidden, d)
		return c, false
	case err != nil:
		w.Header().Set("WWW-Authenticate", `Bearer`)
		d.Error = "A valid bearer token is required."
		o.renderRecipient(w, http.StatusUnauthorized, d)
		return c, false
	}
	return c, true
}

// failRecipient answers err: bad input (400, what is wrong) or the index
// (500).
func (o *officer) failRecipient(w http.ResponseWriter, d recipientData, err error) {
	var bad badInput
	if errors.As(err, &bad) {
		d.Error = string(bad)
		o.renderRecipient(w, http.StatusBadRequest, d)
		return
	}
	d.Error = "The accounting index could not be read."
	o.renderRecipient(w, http.StatusInternalServerError, d)
}

// recordPersons records the view or export of recs before it is answered:
// one Access of op naming each person of recs once (none when recs is
// empty: LedgerRecorder then records nothing). When it cannot, it answers
// 503 and returns false (nothing is disclosed).
func (o *officer) recordPersons(w http.ResponseWriter, r *http.Request, d recipientData, caller auth.Caller, recs []ledger.Record, op string) bool {
	purpose, err := accounting.PurposeOf(r)
	if err != nil {
		d.Error = err.Error()
		o.renderRecipient(w, http.StatusBadRequest, d)
		return false
	}
	a := accounting.Access{RequestID: accounting.NewRequestID(), Caller: caller, Purpose: purpose, Operation: op, Persons: personsOf(recs)}
	w.Header().Set("X-Request-Id", a.RequestID)
	if err := o.Record(r.Context(), a); err != nil {
		w.Header().Set("Retry-After", "5")
		d.Error = "This view could not be recorded in the audit ledger, so nothing is shown. Try again shortly."
		o.renderRecipient(w, http.StatusServiceUnavailable, d)
		return false
	}
	return true
}

// personsOf returns the person of each of recs, each once, in order.
func personsOf(recs []ledger.Record) []string {
	var out []string
	seen := make(map[string]bool, len(recs))
	for i := range recs {
		if p := recs[i].PersonID; !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// renderRecipient writes the page of d with status.
func (o *officer) renderRecipient(w http.ResponseWriter, status int, d recipientData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = recipientTemplate.Execute(w, d)
}
