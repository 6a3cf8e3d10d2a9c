package query

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
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

// maxInvalidParams bounds the invalid_params list of one answer.
const maxInvalidParams = 20

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
// ones. A malformed query string yields a single "query" entry.
func parseQuery(raw string, known ...string) (url.Values, []invalidParam) {
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return nil, []invalidParam{{Name: "query", Reason: reasonQuery}}
	}
	var bad []invalidParam
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
	return vals, bad
}

// parseSignersQuery validates the query of Get Authorized Signers and
// returns every invalid parameter with its reason.
func parseSignersQuery(raw string) (signersQuery, []invalidParam) {
	var q signersQuery
	vals, bad := parseQuery(raw, "consumer_id", "expand", "ssn_mode")
	if vals == nil {
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
// deterministic, and bounds their number.
func sortParams(ps []invalidParam) []invalidParam {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Name != ps[j].Name {
			return ps[i].Name < ps[j].Name
		}
		return ps[i].Reason < ps[j].Reason
	})
	if len(ps) > maxInvalidParams {
		ps = ps[:maxInvalidParams]
	}
	return ps
}

// acceptsJSON reports whether the Accept headers h admit application/json:
// true when there is no Accept header, otherwise when the most specific
// media range matching application/json (application/json, application/*
// or */*) has a q-value above zero. Ranges that do not parse are ignored.
func acceptsJSON(h http.Header) bool {
	vals := h.Values("Accept")
	if len(vals) == 0 {
		return true
	}
	bestSpec, bestQ := -1, 0.0
	for _, v := range vals {
		for _, rng := range strings.Split(v, ",") {
			rng = strings.TrimSpace(rng)
			if rng == "" {
				continue
			}
			mt, params, _ := strings.Cut(rng, ";")
			mt = strings.ToLower(strings.TrimSpace(mt))
			var spec int
			switch mt {
			case "application/json":
				spec = 2
			case "application/*":
				spec = 1
			case "*/*":
				spec = 0
			default:
				continue
			}
			q, ok := qValue(params)
			if !ok {
				continue
			}
			if spec > bestSpec {
				bestSpec, bestQ = spec, q
			} else if spec == bestSpec && q > bestQ {
				bestQ = q
			}
		}
	}
	return bestSpec >= 0 && bestQ > 0
}

// qValue reads the q parameter of a media range's parameters (1 when
// absent); ok is false when q is not a number between 0 and 1.
func qValue(params string) (q float64, ok bool) {
	q = 1
	for _, p := range strings.Split(params, ";") {
		k, v, found := strings.Cut(strings.TrimSpace(p), "=")
		if !found || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return 0, false
		}
		q = f
	}
	return q, true
}

// requireJSON answers 406 when the request's Accept excludes JSON.
func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !acceptsJSON(r.Header) {
			writeProblem(w, r, probNotAcceptable, "This operation answers application/json only.", nil)
			return
		}
		next.ServeHTTP(w, r)
	})
}
