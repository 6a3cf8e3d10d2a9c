package accountingload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// AccountingQuery is a search of lookupd audit serve: a person's
// disclosures, Count a page, in a FHIR Bundle or (JSONL) JSON lines,
// within [Since, Until] when set; or, with a Client or a Subject, the
// officer's search by recipient, an HTML page of the service's page size,
// from Since's day to Until's.
type AccountingQuery struct {
	Person          string
	Count           int
	JSONL           bool
	Since, Until    time.Time
	Client, Subject string
	// Officer, when set, makes it the officer's page of Person
	// (OfficerPerson: its first page, the default filters) or the letter
	// for Person's request of Requested (OfficerLetter: a POST of its
	// form).
	Officer   string
	Requested time.Time
}

// The officer's pages of a person.
const (
	OfficerPerson = "person"
	OfficerLetter = "letter"
)

// Form returns the form q's first request posts (nil: it is a GET).
func (q AccountingQuery) Form() url.Values {
	if q.Officer != OfficerLetter {
		return nil
	}
	return url.Values{"id": {q.Person}, "requested": {q.Requested.UTC().Format(time.DateOnly)},
		"name": {"A. Person"}, "address": {"1 Test Street\nTesttown, TS 00000"}}
}

// URI returns the request URI (path and query) of q's first page.
func (q AccountingQuery) URI() string {
	switch q.Officer {
	case OfficerPerson:
		return "/officer/person?" + url.Values{"id": {q.Person}}.Encode()
	case OfficerLetter:
		return "/officer/letter"
	}
	if q.Client != "" || q.Subject != "" {
		v := url.Values{}
		for k, s := range map[string]string{"client": q.Client, "subject": q.Subject} {
			if s != "" {
				v.Set(k, s)
			}
		}
		if !q.Since.IsZero() {
			v.Set("from", q.Since.UTC().Format(time.DateOnly))
		}
		if !q.Until.IsZero() {
			v.Set("to", q.Until.UTC().Format(time.DateOnly))
		}
		return "/officer/recipient?" + v.Encode()
	}
	v := url.Values{"entity": {q.Person}}
	if q.Count > 0 {
		v.Set("_count", strconv.Itoa(q.Count))
	}
	if q.JSONL {
		v.Set("_format", "jsonl")
	}
	if !q.Since.IsZero() {
		v.Add("date", "ge"+q.Since.UTC().Format(time.RFC3339))
	}
	if !q.Until.IsZero() {
		v.Add("date", "le"+q.Until.UTC().Format(time.RFC3339))
	}
	return "/fhir/AuditEvent?" + v.Encode()
}

// AccountingPage is a page of the accounting service's answer.
type AccountingPage struct {
	// Records are the page's records: the JSON lines, or the resources
	// of the Bundle's entries (AuditEvents).
	Records []json.RawMessage
	Next    string // the request URI of the next page; "" on the last
	Bytes   int    // of the body
	// Rows are the rows of an HTML page (the officer's), which has no
	// Records.
	Rows int
}

// FetchAccountingPage GETs uri (a request URI) of the accounting service
// at base with the bearer token, or with a form POSTs the form to uri
// (the officer's letter), and returns the page it answers.
func FetchAccountingPage(c *http.Client, base, uri string, form url.Values, token string) (AccountingPage, error) {
	var p AccountingPage
	method, sent := http.MethodGet, io.Reader(nil)
	if form != nil {
		method, sent = http.MethodPost, strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, base+uri, sent)
	if err != nil {
		return p, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req) //nolint:gosec // G704: the accounting service this tool started
	if err != nil {
		return p, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return p, err
	}
	p.Bytes = len(body)
	if resp.StatusCode != http.StatusOK {
		return p, fmt.Errorf("%s %s: %s: %.200s", method, uri, resp.Status, body)
	}
	switch ct := resp.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "application/jsonl"):
		return p, jsonlPage(&p, body, resp.Header.Get("Link"))
	case strings.HasPrefix(ct, "text/html"):
		htmlPage(&p, body)
		return p, nil
	}
	return p, bundlePage(&p, body)
}

// htmlRow starts a row of the officer's pages; nextLink is the address
// of their next page.
var (
	htmlRow  = []byte(`<td class="date">`)
	nextLink = regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
)

// htmlPage reads a page of the officer's into p: its rows and its next
// page.
func htmlPage(p *AccountingPage, body []byte) {
	p.Rows = bytes.Count(body, htmlRow)
	if m := nextLink.FindSubmatch(body); m != nil {
		p.Next = html.UnescapeString(string(m[1]))
	}
}

// jsonlPage reads a JSON lines answer and its Link header into p.
func jsonlPage(p *AccountingPage, body []byte, link string) error {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if line := sc.Bytes(); len(line) > 0 {
			p.Records = append(p.Records, append(json.RawMessage(nil), line...))
		}
	}
	if link != "" {
		u, rel, ok := strings.Cut(link, ">")
		if !ok || !strings.HasPrefix(u, "<") || !strings.Contains(rel, `rel="next"`) {
			return fmt.Errorf("link %q: want <uri>; rel=\"next\"", link)
		}
		p.Next = u[1:]
	}
	return sc.Err()
}

// bundlePage reads a FHIR searchset Bundle into p.
func bundlePage(p *AccountingPage, body []byte) error {
	var b struct {
		ResourceType string `json:"resourceType"`
		Link         []struct {
			Relation string `json:"relation"`
			URL      string `json:"url"`
		} `json:"link"`
		Entry []struct {
			Resource json.RawMessage `json:"resource"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return fmt.Errorf("FHIR Bundle: %w", err)
	}
	if b.ResourceType != "Bundle" {
		return fmt.Errorf("a %q, want a Bundle", b.ResourceType)
	}
	for _, e := range b.Entry {
		p.Records = append(p.Records, e.Resource)
	}
	for _, l := range b.Link {
		if l.Relation == "next" {
			p.Next = l.URL
		}
	}
	return nil
}
