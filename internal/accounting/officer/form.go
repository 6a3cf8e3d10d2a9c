package officer

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
)

// officerForm is the search of the officer's page, as its form sends it.
type officerForm struct {
	ID, From, To       string
	Recipient, Purpose string // a client id, a purpose code ("": any)
	Exempt, Self       bool   // show exempt disclosures, reads of the accounting
	After              string // the cursor of the page
	since, until       time.Time
}

// officerParams are the parameters of the officer's page.
var officerParams = []string{"id", "from", "to", "recipient", "purpose", "exempt", "self", "after"}

// parseOfficer returns the search of v, or a badInput saying what is
// wrong. An empty id is the empty form. A recipient or purpose must be
// one the registry knows when it knows any.
func parseOfficer(v url.Values, reg *accounting.Registry) (officerForm, error) {
	var f officerForm
	for k, vs := range v {
		if !slices.Contains(officerParams, k) {
			return f, badInputf("%q is not a field of this search (%s).", k, strings.Join(officerParams, ", "))
		}
		if len(vs) > 1 {
			return f, badInputf("%q is given more than once.", k)
		}
	}
	f.ID, f.From, f.To = accounting.NormalPersonID(strings.TrimSpace(v.Get("id"))), v.Get("from"), v.Get("to")
	f.Recipient, f.Purpose, f.After = v.Get("recipient"), v.Get("purpose"), v.Get("after")
	var err error
	if f.Exempt, err = checkbox(v, "exempt"); err != nil {
		return f, err
	}
	if f.Self, err = checkbox(v, "self"); err != nil {
		return f, err
	}
	if f.ID == "" {
		if len(v) > 0 && (f.From != "" || f.To != "" || f.Recipient != "" || f.Purpose != "" || f.After != "") {
			return f, badInput("A person id is required.")
		}
		return f, nil
	}
	if !accounting.IsPersonID(f.ID) {
		return f, badInputf("The person id %q is not a person id: want a UUID such as 3f2504e0-4f89-41d3-9a0c-0305e82c3301.", f.ID)
	}
	if err := f.dates(); err != nil {
		return f, err
	}
	return f, f.codes(reg)
}

// dates parses From and To.
func (f *officerForm) dates() error {
	for _, d := range []struct {
		name, s string
		t       *time.Time
	}{{"from", f.From, &f.since}, {"to", f.To, &f.until}} {
		if d.s == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, d.s)
		if err != nil {
			return badInputf("The date %s %q is not a date: want YYYY-MM-DD.", d.name, d.s)
		}
		*d.t = t
	}
	if !f.since.IsZero() && !f.until.IsZero() && f.until.Before(f.since) {
		return badInputf("The date range is reversed: from %s is after to %s.", f.From, f.To)
	}
	if !f.until.IsZero() {
		f.until = f.until.Add(24*time.Hour - time.Nanosecond) // the whole day
	}
	return nil
}

// codes checks the recipient and the purpose.
func (f *officerForm) codes(reg *accounting.Registry) error {
	if f.Recipient != "" && (!accounting.IsCode(f.Recipient) || len(reg.ClientIDs()) > 0 && !reg.HasClient(f.Recipient)) {
		return badInputf("The recipient %q is not a client of the clients registry.", f.Recipient)
	}
	if f.Purpose != "" {
		if _, ok := reg.Purpose(f.Purpose); !accounting.IsCode(f.Purpose) || len(reg.PurposeCodes()) > 0 && !ok {
			return badInputf("The purpose %q is not a code of the purposes registry.", f.Purpose)
		}
	}
	return nil
}

// checkbox returns whether the checkbox name is ticked ("1"; absent, ""
// or "0": not).
func checkbox(v url.Values, name string) (bool, error) {
	switch v.Get(name) {
	case "1":
		return true, nil
	case "", "0":
		return false, nil
	}
	return false, badInputf("%q must be 1 or 0, not %q.", name, v.Get(name))
}

// query returns the index query of f, pages of limit records.
func (f officerForm) query(limit int) accounting.Query {
	return accounting.Query{Person: f.ID, Since: f.since, Until: f.until, After: f.After, Limit: limit}
}

// keep returns the filter of f's search: its recipient and purpose, and,
// unless asked for, no exempt disclosure (a purpose the registry says is
// exempt; an unknown one counts as accountable) and no read of the
// accounting itself.
func (f officerForm) keep(reg *accounting.Registry) func(*ledger.Record) bool {
	return f.keepCounting(reg, nil)
}

// hidden counts the records a search matched but hid: exempt
// disclosures, and reads of the accounting itself.
type hidden struct{ Exempt, Self int }

// keepCounting is keep, counting in h (when not nil) the records it hides
// only for being exempt or a read of the accounting. A page that shows no
// row has seen every record of its range, so its h counts them all.
func (f officerForm) keepCounting(reg *accounting.Registry, h *hidden) func(*ledger.Record) bool {
	return func(r *ledger.Record) bool {
		if f.Recipient != "" && r.Client != f.Recipient || f.Purpose != "" && r.Purpose != f.Purpose {
			return false
		}
		if !f.Self && accounting.IsAccountingRead(r.Operation) {
			if h != nil {
				h.Self++
			}
			return false
		}
		if p, ok := reg.Purpose(r.Purpose); ok && p.Exempt && !f.Exempt {
			if h != nil {
				h.Exempt++
			}
			return false
		}
		return true
	}
}
