package query

import (
	"net/url"
	"slices"
	"strings"
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

// isCanonicalUUID reports whether s is a UUID written 8-4-4-4-12 in
// hexadecimal digits of any case.
func isCanonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// signersQuery is the validated query of Get Authorized Signers.
type signersQuery struct {
	consumerID string // lower-case
	expand     bool
	ssnMode    string // one of the ssn* values; LAST4 when expand is given without it
}

// parseQuery parses raw and reports parameters not in known and repeated
// ones. A malformed query string yields a single "query" entry and ok
// false.
func parseQuery(raw string, known ...string) (vals url.Values, bad []invalidParam, ok bool) {
	if raw == "" {
		return nil, nil, true
	}
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return nil, []invalidParam{{Name: "query", Reason: reasonQuery}}, false
	}
	for name, vs := range vals {
		isKnown := false
		for _, k := range known {
			if name == k {
				isKnown = true
				break
			}
		}
		switch {
		case !isKnown:
			bad = append(bad, invalidParam{Name: name, Reason: reasonUnknown})
		case len(vs) > 1:
			bad = append(bad, invalidParam{Name: name, Reason: reasonRepeated})
		}
	}
	return vals, bad, true
}

// parseSignersQuery validates the query of Get Authorized Signers and
// returns every invalid parameter with its reason.
func parseSignersQuery(raw string) (signersQuery, []invalidParam) {
	var q signersQuery
	vals, bad, ok := parseQuery(raw, "consumer_id", "expand", "ssn_mode")
	if !ok {
		return q, bad
	}
	single := func(name string) (string, bool) {
		vs := vals[name]
		return firstOr(vs), len(vs) == 1
	}
	if id, ok := single("consumer_id"); !ok {
		if len(vals["consumer_id"]) == 0 {
			bad = append(bad, invalidParam{Name: "consumer_id", Reason: reasonRequired})
		}
	} else if !isCanonicalUUID(id) {
		bad = append(bad, invalidParam{Name: "consumer_id", Reason: reasonUUID})
	} else {
		q.consumerID = strings.ToLower(id)
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
		if _, given := vals["expand"]; !given {
			bad = append(bad, invalidParam{Name: "ssn_mode", Reason: reasonNeedsExp})
		}
	}
	if q.expand && q.ssnMode == "" {
		q.ssnMode = ssnLast4
	}
	return q, sortParams(bad)
}

func firstOr(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
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
