package officer

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/erasure"
	"github.com/lookup/persons/internal/ledger"
)

// The officer's page: one person's accounting of disclosures, for the
// privacy officer who answers the person's request (docs/audit.md, "How
// an officer answers a request"). Server-rendered from the embedded
// templates of web/, with one stylesheet and no script.
//
//	GET /officer/person?id=<uuid>&from=YYYY-MM-DD&to=YYYY-MM-DD&recipient=<client id>&purpose=<code>&exempt=1&self=1&after=<cursor>
//	GET /officer/person.csv?<the same>
//	GET /officer/letter?id=<uuid>, POST /officer/letter (letter.go)
//	GET /officer/officer.css, /officer/letter.css

//go:embed web
var webFiles embed.FS

var personPage = template.Must(template.New("person.html").ParseFS(webFiles, "web/person.html"))

// Config configures New.
type Config struct {
	Index    *accounting.Index
	Registry *accounting.Registry // nil: none, every code is unknown
	// Authorize, Record and Now are as the FHIR search's
	// (fhir.HandlerConfig; Record is given an accounting.Access of
	// accounting.OperationView or OperationExport).
	Authorize func(r *http.Request) (auth.Caller, error)
	Record    func(ctx context.Context, a accounting.Access) error
	Now       func() time.Time
	// Status tells how current the index is (nil: not shown).
	Status func() accounting.IndexStatus
	// PageSize is the rows of a page (LOOKUP_OFFICER_PAGE_SIZE); 0 = 50.
	PageSize int
	// Registerer takes the counter of unknown codes shown (nil: none).
	Registerer prometheus.Registerer
	// Letterhead is the sender at the head of each letter (letter.go).
	Letterhead Letterhead
	// Erasure reports the erasure of a person from the erasure bucket's
	// evidence (erasure.Status without Live), for the person page's
	// section "Erasure" (erasure.go); nil: the section is not shown.
	Erasure func(ctx context.Context, personID string) (erasure.Report, error)
	// Logger takes the failures the pages show without their details
	// (nil: discard).
	Logger *slog.Logger
}

// MetricUnknownCodes counts the rows shown or exported whose client or
// purpose code the registries lack, by kind ("client" or "purpose").
const MetricUnknownCodes = "lookup_accounting_unknown_codes_total"

// officer is the handler of New.
type officer struct {
	Config
	unknown *prometheus.CounterVec
}

// New returns the officer's page and its CSV export. It returns an
// error when its metric cannot be registered.
func New(cfg Config) (http.Handler, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 50
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	o := &officer{Config: cfg, unknown: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricUnknownCodes,
		Help: "Rows of the officer's page and CSV export whose client or purpose code the registries lack, by kind."}, []string{"kind"})}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(o.unknown); err != nil {
			return nil, err
		}
	}
	css, err := fs.Sub(webFiles, "web")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /officer/person", o.page)
	mux.HandleFunc("GET /officer/person.csv", o.export)
	mux.HandleFunc("GET /officer/recipient", o.recipient)
	mux.HandleFunc("GET /officer/recipient.csv", o.recipientExport)
	mux.HandleFunc("GET /officer/letter", o.letterForm)
	mux.HandleFunc("POST /officer/letter", o.letter)
	files := http.StripPrefix("/officer/", http.FileServerFS(css))
	mux.Handle("GET /officer/officer.css", files)
	mux.Handle("GET /officer/letter.css", files)
	// A form posted from another site (the OIDC proxy's session cookie
	// would carry it) is refused: Sec-Fetch-Site, else Origin, must be
	// this site's.
	return secureHeaders(http.NewCrossOriginProtection().Handler(mux)), nil
}

// secureHeaders sets the headers of every answer of the officer's pages:
// nothing cached, no script, no framing, no referrer.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// authorize answers 401 or 403 when r's caller may not read the
// accounting, and returns false; the handlers behind auth.Authenticator
// see only admitted callers.
func (o *officer) authorize(w http.ResponseWriter, r *http.Request) (auth.Caller, bool) {
	c, err := o.Authorize(r)
	switch {
	case errors.Is(err, accounting.ErrForbidden):
		o.render(w, http.StatusForbidden, pageData{Error: "This token does not allow reading the accounting of disclosures (scope read:audit)."})
		return c, false
	case err != nil:
		w.Header().Set("WWW-Authenticate", `Bearer`)
		o.render(w, http.StatusUnauthorized, pageData{Error: "A valid bearer token is required."})
		return c, false
	}
	return c, true
}

// page answers the page of a person's disclosures.
func (o *officer) page(w http.ResponseWriter, r *http.Request) {
	caller, ok := o.authorize(w, r)
	if !ok {
		return
	}
	d := o.formData()
	f, err := parseOfficer(r.URL.Query(), o.Registry)
	d.Form = f
	if err == nil && f.ID == "" {
		o.render(w, http.StatusOK, d) // the empty form
		return
	}
	var recs []ledger.Record
	var next string
	if err == nil {
		recs, next, err = o.Index.SearchFunc(f.query(o.PageSize), f.keepCounting(o.Registry, &d.Hidden))
		if errors.Is(err, accounting.ErrBadCursor) {
			err = badInput("after: not a page this service gave; start again from the first page")
		}
	}
	if err != nil {
		o.fail(w, d, err)
		return
	}
	if !o.record(w, r, caller, f.ID, accounting.OperationView) {
		return
	}
	d.Searched, d.Rows = true, o.rows(recs)
	if next != "" {
		d.Next = f.url("/officer/person", next)
	}
	if f.After != "" {
		d.First = f.url("/officer/person", "")
	}
	d.CSV = f.url("/officer/person.csv", "")
	d.Letter = letterURL(f.ID)
	o.status(&d, f.ID)
	d.Erasure = o.erasure(r.Context(), f.ID)
	o.render(w, http.StatusOK, d)
}

// fail answers err: bad input (400, what is wrong) or the index (500).
func (o *officer) fail(w http.ResponseWriter, d pageData, err error) {
	var bad badInput
	if errors.As(err, &bad) {
		d.Error = string(bad)
		o.render(w, http.StatusBadRequest, d)
		return
	}
	d.Error = "The accounting index could not be read."
	o.render(w, http.StatusInternalServerError, d)
}

// record records the view or export before it is answered; when it
// cannot, it answers 503 and returns false (nothing is disclosed).
func (o *officer) record(w http.ResponseWriter, r *http.Request, caller auth.Caller, person, op string) bool {
	purpose, err := accounting.PurposeOf(r)
	if err != nil {
		o.render(w, http.StatusBadRequest, pageData{Error: err.Error()})
		return false
	}
	a := accounting.Access{RequestID: accounting.NewRequestID(), Caller: caller, Purpose: purpose, Person: person, Operation: op}
	w.Header().Set("X-Request-Id", a.RequestID)
	if err := o.Record(r.Context(), a); err != nil {
		w.Header().Set("Retry-After", "5")
		o.render(w, http.StatusServiceUnavailable, pageData{Error: "This view could not be recorded in the audit ledger, so nothing is shown. Try again shortly."})
		return false
	}
	return true
}

// status fills in how far back the records go and how current the index
// is.
func (o *officer) status(d *pageData, person string) {
	if t, ok, err := o.Index.Oldest(person); err == nil && ok {
		d.Oldest = t.Format(time.DateOnly)
	}
	if o.Status != nil {
		s := o.Status()
		d.Status = &s
		if !s.LedgerSince.IsZero() {
			d.LedgerSince = s.LedgerSince.Format(time.DateOnly)
		}
	}
	d.Generated = o.Now().UTC().Format("2006-01-02 15:04:05 UTC")
}

// render writes the page of d with status.
func (o *officer) render(w http.ResponseWriter, status int, d pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = personPage.Execute(w, d)
}

// url returns the address of path with f's search, at the page after
// cursor ("" for the first).
func (f officerForm) url(path, cursor string) string {
	v := url.Values{"id": {f.ID}}
	for k, s := range map[string]string{"from": f.From, "to": f.To, "recipient": f.Recipient, "purpose": f.Purpose, "after": cursor} {
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

// badInput is an error of the request's parameters, said to the officer.
type badInput string

func (b badInput) Error() string { return string(b) }

func badInputf(format string, args ...any) badInput { return badInput(fmt.Sprintf(format, args...)) }
