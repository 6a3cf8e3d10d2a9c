package query

import (
	"net/url"
	"slices"
	"strings"

	"github.com/lookup/persons/events"
)

// The query parameter values of Get Authorized Signers.
const (
	expandPPD = "PROTECTED_PERSONAL_DATA"

	ssnLast4  = "LAST4"
	ssnMasked = "MASKED"
	ssnFull   = "FULL"
	ssnNone   = "NONE"
)

// Reasons given for invalid parameters.
const (
	reasonRequired = "is required"
	reasonRepeated = "must be given at most once"
	reasonUnknown  = "is not a known parameter"
	reasonUUID     = "must be a canonical UUID (8-4-4-4-12 hexadecimal digits)"
	reasonEscape   = "holds an invalid percent-encoding"
	reasonExpand   = "must be PROTECTED_PERSONAL_DATA"
	reasonSSNMode  = "must be one of LAST4, MASKED, FULL, NONE"
	reasonNeedsExp = "requires expand=PROTECTED_PERSONAL_DATA"
	reasonQuery    = "the query string is malformed"
)

// signersQuery is the validated query of Get Authorized Signers.
type signersQuery struct {
	consumerID string // lower-case
	expand     bool
	ssnMode    string // one of the ssn* values; LAST4 when expand is given without it
}

// maxKnownParams is the most known parameters parseQuery tells apart.
const maxKnownParams = 4

// queryParams are the known parameters of a query string: the first
// value of each and how many times each was given, in the order of known.
type queryParams struct {
	known []string
	first [maxKnownParams]string
	count [maxKnownParams]int
}

// get returns the first value of the known parameter name and how many
// times it was given.
func (q *queryParams) get(name string) (first string, n int) {
	for i, k := range q.known {
		if k == name {
			return q.first[i], q.count[i]
		}
	}
	return "", 0
}

func (q *queryParams) add(name, value string) bool {
	for i, k := range q.known {
		if k == name {
			if q.count[i] == 0 {
				q.first[i] = value
			}
			q.count[i]++
			return true
		}
	}
	return false
}

// parseQuery parses raw as url.ParseQuery does and reports parameters not
// in known (at most maxKnownParams) and known ones given more than once.
// A malformed query string yields a single "query" entry and ok false. A
// query without escapes ('%', '+'), semicolons or many parameters, as
// callers send, is read in place; any other through url.ParseQuery.
func parseQuery(raw string, known ...string) (params queryParams, bad []invalidParam, ok bool) {
	params.known = known
	if strings.ContainsAny(raw, "%+;") || strings.Count(raw, "&") >= 16 {
		vals, err := url.ParseQuery(raw)
		if err != nil {
			return params, []invalidParam{{Name: "query", Reason: reasonQuery}}, false
		}
		for name, vs := range vals {
			for _, v := range vs {
				if !params.add(name, v) {
					bad = append(bad, invalidParam{Name: name, Reason: reasonUnknown})
					break
				}
			}
		}
	} else {
		for rest := raw; rest != ""; {
			var pair string
			pair, rest, _ = strings.Cut(rest, "&")
			if pair == "" {
				continue
			}
			name, value, _ := strings.Cut(pair, "=")
			if !params.add(name, value) && !slices.Contains(bad, invalidParam{Name: name, Reason: reasonUnknown}) {
				bad = append(bad, invalidParam{Name: name, Reason: reasonUnknown})
			}
		}
	}
	for i, name := range known {
		if params.count[i] > 1 {
			bad = append(bad, invalidParam{Name: name, Reason: reasonRepeated})
		}
	}
	return params, bad, true
}

// parseSignersQuery validates the query of Get Authorized Signers and
// returns every invalid parameter with its reason.
func parseSignersQuery(raw string) (signersQuery, []invalidParam) {
	var q signersQuery
	params, bad, ok := parseQuery(raw, "consumer_id", "expand", "ssn_mode")
	if !ok {
		return q, bad
	}
	single := func(name string) (string, bool) {
		v, n := params.get(name)
		return v, n == 1
	}
	if id, ok := single("consumer_id"); !ok {
		if _, n := params.get("consumer_id"); n == 0 {
			bad = append(bad, invalidParam{Name: "consumer_id", Reason: reasonRequired})
		}
	} else if norm, ok := events.NormalizeID(id); !ok {
		bad = append(bad, invalidParam{Name: "consumer_id", Reason: reasonUUID})
	} else {
		q.consumerID = norm
	}
	if v, ok := single("expand"); ok {
		if v == expandPPD {
			q.expand = true
		} else {
			bad = append(bad, invalidParam{Name: "expand", Reason: reasonExpand})
		}
	}
	if v, ok := single("ssn_mode"); ok {
		switch v {
		case ssnLast4, ssnMasked, ssnFull, ssnNone:
			q.ssnMode = v
		default:
			bad = append(bad, invalidParam{Name: "ssn_mode", Reason: reasonSSNMode})
		}
		if _, n := params.get("expand"); n == 0 {
			bad = append(bad, invalidParam{Name: "ssn_mode", Reason: reasonNeedsExp})
		}
	}
	if q.expand && q.ssnMode == "" {
		q.ssnMode = ssnLast4
	}
	return q, sortParams(bad)
}

// sortParams orders invalid parameters by name and reason, so answers are
// deterministic. Every one is kept: the list is bounded by the size of
// the request line, and cutting it could drop the very parameter the
// caller got wrong first.
func sortParams(ps []invalidParam) []invalidParam {
	slices.SortFunc(ps, func(a, b invalidParam) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Reason, b.Reason)
	})
	return ps
}
