// Package redact makes URLs fit for a log line or an error message: the
// one place where the program's URLs (NATS servers, the JWKS) lose their
// credentials before anyone sees them. The standard library's
// url.URL.Redacted masks only a password; a token given as the user alone
// (nats://token@host), a query (?token=…) and a fragment stay in it.
package redact

import (
	"net/url"
	"strings"
)

// URL returns raw fit for a log line or an error message: without its
// user information (a user alone, such as a token, as well as
// user:password), with a query replaced by "redacted", and without a
// fragment. A raw that does not parse as a URL is scrubbed the same way
// by hand (everything between "://" and the last "@" of the authority is
// dropped, and everything after "?" or "#"), so that no credential it
// carries is shown either.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		return scrub(raw)
	}
	u.User = nil
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery = "redacted"
	}
	u.ForceQuery = false
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// URLs applies URL to each of the comma-separated urls (a NATS server
// list), trimming the spaces around each.
func URLs(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		parts[i] = URL(strings.TrimSpace(p))
	}
	return strings.Join(parts, ",")
}

// scrub is URL for a raw that does not parse as a URL.
func scrub(raw string) string {
	s, query := raw, false
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		query = s[i] == '?'
		s = s[:i]
	}
	rest, scheme := s, ""
	if i := strings.Index(s, "://"); i >= 0 {
		scheme, rest = s[:i+3], s[i+3:]
	}
	auth, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		auth, path = rest[:i], rest[i:]
	}
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
	}
	s = scheme + auth + path
	if query {
		s += "?redacted"
	}
	return s
}
