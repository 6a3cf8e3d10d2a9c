package officer

import (
	"errors"
	"html/template"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
)

// The accounting given to the person (45 CFR 164.528(b)): a letter, for
// one person and the date of their request, that the officer prints or
// saves as PDF and sends.
//
//	GET  /officer/letter?id=<uuid>   the form (request date, period, summary, paper, name, address)
//	POST /officer/letter             the letter, recorded as accounting.OperationProvide with the request date
//
// The letter lists the accountable disclosures (not those whose purpose
// the registry says is exempt under 164.528(a)(1), not reads of the
// accounting itself) of the six years before the request, or of the
// shorter period the person asked for, oldest first; with the summary,
// the disclosures to one recipient for one purpose are one entry: the
// first in full, how many, and the date of the last (164.528(b)(3)).
//
// The person's name and mailing address are typed by the officer and
// posted with the form: they are in the letter only, never in a URL, the
// ledger, a log or the index (the accounting service never reads
// PERSONS).

var letterPages = template.Must(template.New("letter").Funcs(template.FuncMap{"lines": lines, "join": strings.Join}).
	ParseFS(webFiles, "web/letter.html", "web/letter-form.html"))

// Letterhead is the sender printed at the head of each letter: the
// covered entity's name and postal address, and how to reach its privacy
// officer (LOOKUP_COVERED_ENTITY_NAME, LOOKUP_COVERED_ENTITY_ADDRESS,
// LOOKUP_PRIVACY_OFFICER_CONTACT). What is empty is not printed; Unset
// names the settings to set, in a notice that the officer's screen shows
// above the letter and the printout does not.
type Letterhead struct {
	Name    string
	Address []string // its lines
	Contact string   // printed as "Privacy officer: " and Contact
	Unset   []string // the settings unset, named by the notice (none: no notice)
}

// accountingYears is the period an accounting covers by default: the six
// years before the request (164.528(a)(1)).
const accountingYears = 6

// maxLetterForm bounds the body of the letter's form.
const maxLetterForm = 16 << 10

// letterForm is the letter's form, as the officer fills it in.
type letterForm struct {
	ID, Requested, From string
	Summary             bool
	Paper               string // "letter" or "a4"
	Name, Address       string
	requested, since    time.Time
}

// letterParams are the fields of the form; the name and the address are
// only ever posted.
var (
	letterParams = []string{"id", "requested", "from", "summary", "paper", "name", "address"}
	letterPapers = []string{"letter", "a4"}
)

// letterData is what the form or the letter shows.
type letterData struct {
	Form      letterForm
	Papers    []string
	Error     string
	Today     string
	Since     string // the period covered, as the letter writes dates
	Until     string
	Requested string
	Entries   []letterEntry
	RequestID string
	From      Letterhead // the sender
}

// letterEntry is one disclosure of the letter, or with the summary the
// first of several to one recipient for one purpose.
type letterEntry struct {
	Date, Time string
	Reference  string // the service's (accounting.Reference), never the caller's request id

	Recipient, Address string // the organisation ("" when the registry lacks the client at that date)
	Client             string
	Disclosed, Purpose string
	Count              int    // the disclosures this entry stands for (the summary)
	Last               string // the date of the last of them, when Count > 1
	Final              bool   // the letter's last entry, printed with the closing and signature
	key                string
}

// letterForm answers the form, filled in with id and today's date.
func (o *officer) letterForm(w http.ResponseWriter, r *http.Request) {
	if _, ok := o.authorize(w, r); !ok {
		return
	}
	d := letterData{Papers: letterPapers, Today: o.today().Format(time.DateOnly)}
	v := r.URL.Query()
	for k := range v {
		if k != "id" {
			o.renderLetter(w, http.StatusBadRequest, "letter-form.html", d,
				badInputf("%q is not a field of this address: the letter's details are sent with its form, never in the address.", k))
			return
		}
	}
	d.Form = letterForm{ID: accounting.NormalPersonID(v.Get("id")), Requested: d.Today, Paper: "letter"}
	if d.Form.ID != "" && !accounting.IsPersonID(d.Form.ID) {
		o.renderLetter(w, http.StatusBadRequest, "letter-form.html", d, badInputf("The person id %q is not a person id: want a UUID.", d.Form.ID))
		return
	}
	o.renderLetter(w, http.StatusOK, "letter-form.html", d, nil)
}

// letter answers the letter of the posted form.
func (o *officer) letter(w http.ResponseWriter, r *http.Request) {
	caller, ok := o.authorize(w, r)
	if !ok {
		return
	}
	d := letterData{Papers: letterPapers, Today: o.today().Format(time.DateOnly)}
	f, err := o.parseLetter(w, r)
	d.Form = f
	var recs []ledger.Record
	if err == nil {
		recs, err = o.accountable(f)
	}
	if err != nil {
		var bad badInput
		if !errors.As(err, &bad) {
			o.renderLetter(w, http.StatusInternalServerError, "letter-form.html", d, badInput("The accounting index could not be read."))
			return
		}
		o.renderLetter(w, http.StatusBadRequest, "letter-form.html", d, err)
		return
	}
	a := accounting.Access{RequestID: accounting.NewRequestID(), Caller: caller, Person: f.ID, Operation: accounting.OperationProvide, Requested: f.Requested}
	if a.Purpose, err = accounting.PurposeOf(r); err != nil {
		o.renderLetter(w, http.StatusBadRequest, "letter-form.html", d, badInput(err.Error()))
		return
	}
	w.Header().Set("X-Request-Id", a.RequestID)
	if err := o.Record(r.Context(), a); err != nil {
		w.Header().Set("Retry-After", "5")
		o.renderLetter(w, http.StatusServiceUnavailable, "letter-form.html", d,
			badInput("This accounting could not be recorded in the audit ledger, so it is not given. Try again shortly."))
		return
	}
	d.RequestID, d.Entries, d.From = a.RequestID, o.entries(recs, f.Summary), o.Letterhead
	d.Since, d.Until = longDate(f.since), longDate(f.requested)
	d.Requested, d.Today = longDate(f.requested), longDate(o.today())
	o.renderLetter(w, http.StatusOK, "letter.html", d, nil)
}

// today is the date of Now, in UTC.
func (o *officer) today() time.Time {
	y, m, d := o.Now().UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// parseLetter returns the posted form, or a badInput saying what is
// wrong.
func (o *officer) parseLetter(w http.ResponseWriter, r *http.Request) (letterForm, error) {
	var f letterForm
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/x-www-form-urlencoded" {
		return f, badInput("The letter's form is sent as application/x-www-form-urlencoded.")
	}
	if r.URL.RawQuery != "" {
		return f, badInput("The letter's details are sent with its form, never in the address.")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLetterForm)
	if err := r.ParseForm(); err != nil {
		return f, badInput("The form could not be read: it is malformed or too long.")
	}
	v := r.PostForm
	for k, vs := range v {
		if !slices.Contains(letterParams, k) {
			return f, badInputf("%q is not a field of the letter's form (%s).", k, strings.Join(letterParams, ", "))
		}
		if len(vs) > 1 {
			return f, badInputf("%q is given more than once.", k)
		}
	}
	f = letterForm{ID: accounting.NormalPersonID(strings.TrimSpace(v.Get("id"))), Requested: v.Get("requested"), From: v.Get("from"), Paper: v.Get("paper"),
		Name: strings.TrimSpace(v.Get("name")), Address: strings.TrimSpace(strings.ReplaceAll(v.Get("address"), "\r\n", "\n"))}
	var err error
	if f.Summary, err = checkbox(v, "summary"); err != nil {
		return f, err
	}
	if !accounting.IsPersonID(f.ID) {
		return f, badInputf("The person id %q is not a person id: want a UUID such as 3f2504e0-4f89-41d3-9a0c-0305e82c3301.", f.ID)
	}
	if f.Paper == "" {
		f.Paper = "letter"
	}
	if !slices.Contains(letterPapers, f.Paper) {
		return f, badInputf("The paper %q is not one of %s.", f.Paper, strings.Join(letterPapers, ", "))
	}
	if err := f.period(o.today()); err != nil {
		return f, err
	}
	return f, f.recipient()
}

// period parses the request date and the start of the period: the
// request date is not in the future, the period starts at most six years
// before it (by default exactly), and not after it.
func (f *letterForm) period(today time.Time) error {
	if f.Requested == "" {
		return badInput("The date of the person's request is required.")
	}
	var err error
	if f.requested, err = time.Parse(time.DateOnly, f.Requested); err != nil {
		return badInputf("The request date %q is not a date: want YYYY-MM-DD.", f.Requested)
	}
	if f.requested.After(today) {
		return badInputf("The request date %s is in the future (today is %s).", f.Requested, today.Format(time.DateOnly))
	}
	earliest := f.requested.AddDate(-accountingYears, 0, 0)
	if f.From == "" {
		f.since = earliest
		return nil
	}
	if f.since, err = time.Parse(time.DateOnly, f.From); err != nil {
		return badInputf("The date from %q is not a date: want YYYY-MM-DD.", f.From)
	}
	switch {
	case f.since.Before(earliest):
		return badInputf("The period starts at most six years before the request: from %s or later, not %s.", earliest.Format(time.DateOnly), f.From)
	case f.since.After(f.requested):
		return badInputf("The date range is reversed: from %s is after the request date %s.", f.From, f.Requested)
	}
	return nil
}

// recipient checks the person's name and mailing address: both given,
// printable, and of a letter's size.
func (f *letterForm) recipient() error {
	switch {
	case f.Name == "":
		return badInput("The person's name is required: the letter is addressed to them.")
	case f.Address == "":
		return badInput("The person's mailing address is required.")
	case utf8.RuneCountInString(f.Name) > 200 || strings.ContainsFunc(f.Name, unicode.IsControl):
		return badInput("The person's name must be one line of at most 200 characters.")
	case utf8.RuneCountInString(f.Address) > 500 || strings.Count(f.Address, "\n") > 7 ||
		strings.ContainsFunc(f.Address, func(c rune) bool { return c != '\n' && unicode.IsControl(c) }):
		return badInput("The mailing address must be at most 8 lines and 500 characters.")
	}
	return nil
}

// accountable returns the accountable disclosures of f's period, oldest
// first.
func (o *officer) accountable(f letterForm) ([]ledger.Record, error) {
	keep := officerForm{}.keep(o.Registry) // no exempt disclosure, no read of the accounting
	recs, err := everyPage("", func(after string) ([]ledger.Record, string, error) {
		q := accounting.Query{Person: f.ID, Since: f.since, Until: f.requested.Add(24*time.Hour - time.Nanosecond), After: after, Limit: 1000}
		return o.Index.SearchFunc(q, keep)
	}, "a letter cannot list them; shorten the period (from) and give several letters.")
	slices.Reverse(recs)
	return recs, err
}

// entries returns recs as the letter's entries; with summary, one entry
// for each recipient and purpose, in the order of their first disclosure.
func (o *officer) entries(recs []ledger.Record, summary bool) []letterEntry {
	rows := o.rows(recs)
	out := make([]letterEntry, 0, len(rows))
	first := map[string]int{}
	for i, w := range rows {
		at := recs[i].Time.UTC()
		e := letterEntry{Date: longDate(at), Time: at.Format("15:04 UTC"), Reference: w.Reference, Recipient: w.Organisation,
			Address: w.Address, Client: w.Client, Disclosed: w.Disclosed, Purpose: w.Purpose, Count: 1,
			key: recs[i].Client + "\x00" + recs[i].Purpose}
		if j, ok := first[e.key]; ok && summary {
			out[j].Count++
			out[j].Last = e.Date
			continue
		}
		first[e.key] = len(out)
		out = append(out, e)
	}
	if len(out) > 0 {
		out[len(out)-1].Final = true
	}
	return out
}

// renderLetter writes the template name of d with status, and err's text
// when it is bad input.
func (o *officer) renderLetter(w http.ResponseWriter, status int, name string, d letterData, err error) {
	var bad badInput
	if errors.As(err, &bad) {
		d.Error = string(bad)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = letterPages.ExecuteTemplate(w, name, d)
}

// longDate writes t as a letter does: 2 January 2006.
func longDate(t time.Time) string { return t.UTC().Format("2 January 2006") }

// lines splits an address into its lines.
func lines(s string) []string { return strings.Split(s, "\n") }

// letterURL is the address of the letter's form for person.
func letterURL(person string) string {
	return (&url.URL{Path: "/officer/letter", RawQuery: url.Values{"id": {person}}.Encode()}).String()
}
