package fhir

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/redact"
)

// Client reads a person's accounting from the search of lookupd audit
// serve (NewHandler), for lookupd audit --person.
type Client struct {
	BaseURL string       // the service, e.g. https://accounting.example:8081
	Token   string       // bearer token with the scope read:audit
	HTTP    *http.Client // nil = a client with a 30 s timeout
	Purpose string       // sent as Lookup-Purpose when not ""
	// PageSize is the records asked for a page (_count); 0 = the most
	// the service gives (500).
	PageSize int
}

// Fetch returns the disclosures of person within [since, until] (a zero
// time bounds nothing), newest first: every page of the search, as JSON
// lines. Its errors name the service's URL without credentials or query.
func (c Client) Fetch(ctx context.Context, person string, since, until time.Time) ([]ledger.Record, error) {
	base, err := url.Parse(strings.TrimSuffix(c.BaseURL, "/") + "/fhir/AuditEvent")
	if err != nil {
		return nil, fmt.Errorf("accounting URL %s: %w", redact.URL(c.BaseURL), err)
	}
	size := c.PageSize
	if size <= 0 || size > maxCount {
		size = maxCount
	}
	v := url.Values{"entity": {person}, "_format": {"jsonl"}, "_count": {fmt.Sprint(size)}}
	if !since.IsZero() {
		v.Add("date", "ge"+since.UTC().Format(time.RFC3339Nano))
	}
	if !until.IsZero() {
		v.Add("date", "le"+until.UTC().Format(time.RFC3339Nano))
	}
	base.RawQuery = v.Encode()
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	var out []ledger.Record
	for next := base; next != nil; {
		recs, link, err := c.page(ctx, hc, next)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
		next = nil
		if link != "" {
			if next, err = base.Parse(link); err != nil {
				return nil, fmt.Errorf("accounting service %s: next page: %w", redact.URL(c.BaseURL), err)
			}
		}
	}
	return out, nil
}

// page gets one page at u: its records and the link to the next page.
func (c Client) page(ctx context.Context, hc *http.Client, u *url.URL) ([]ledger.Record, string, error) {
	shown := redact.URL(u.String())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", fmt.Errorf("accounting service %s: %w", shown, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if c.Purpose != "" {
		req.Header.Set(accounting.PurposeHeader, c.Purpose)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("accounting service %s: %w", shown, redactErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("accounting service %s: %s%s", shown, resp.Status, errorDetail(resp.Body))
	}
	var recs []ledger.Record
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var r ledger.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, "", fmt.Errorf("accounting service %s: record %d: %w", shown, len(recs)+1, err)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, "", fmt.Errorf("accounting service %s: %w", shown, err)
	}
	return recs, nextLink(resp.Header.Get("Link")), nil
}

// nextLink returns the target of the rel="next" link of a Link header.
func nextLink(h string) string {
	for _, l := range strings.Split(h, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(l), ";")
		if ok && strings.Contains(params, `rel="next"`) {
			return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(target), "<"), ">")
		}
	}
	return ""
}

// errorDetail returns ": " and what an error answer says (the detail of
// an API problem, the diagnostics of an OperationOutcome), "" when it
// says nothing readable.
func errorDetail(body io.Reader) string {
	var e struct {
		Detail string `json:"detail"`
		Issue  []struct {
			Diagnostics string `json:"diagnostics"`
		} `json:"issue"`
	}
	if json.NewDecoder(io.LimitReader(body, 64<<10)).Decode(&e) != nil {
		return ""
	}
	if e.Detail != "" {
		return ": " + e.Detail
	}
	if len(e.Issue) > 0 && e.Issue[0].Diagnostics != "" {
		return ": " + e.Issue[0].Diagnostics
	}
	return ""
}

// redactErr returns err without the URL it may name (an *url.Error holds
// the whole URL, query included).
func redactErr(err error) error {
	if ue, ok := err.(*url.Error); ok { //nolint:errorlint // the outermost error of http.Client.Do
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

// ReadTokenFile returns the bearer token in the file path (surrounding
// white space trimmed), for Client.Token. Its errors name the file by
// setting (the setting that names it) and path, never the token; an
// empty file is an error.
func ReadTokenFile(setting, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", setting, err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s %s: empty", setting, path)
	}
	return tok, nil
}
