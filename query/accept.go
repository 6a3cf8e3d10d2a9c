package query

import (
	"net/http"
	"strconv"
	"strings"
)

// acceptsJSON reports whether the Accept headers h admit application/json:
// true when there is no Accept header or when its list is empty (an empty
// value, or only commas and white space: RFC 9110 section 5.6.1 has
// recipients ignore empty list elements, and a client that states no
// preference accepts anything), otherwise when the most specific media
// range matching application/json (application/json, application/* or
// */*) has a q-value above zero. Ranges that do not parse are ignored.
func acceptsJSON(h http.Header) bool {
	bestSpec, bestQ := -1, 0.0
	empty := true
	for _, v := range h["Accept"] {
		for v != "" {
			var rng string
			rng, v, _ = strings.Cut(v, ",")
			rng = strings.TrimSpace(rng)
			if rng == "" {
				continue
			}
			empty = false
			mt, params, _ := strings.Cut(rng, ";")
			spec := jsonSpecificity(strings.TrimSpace(mt))
			if spec < 0 {
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
	return empty || bestSpec >= 0 && bestQ > 0
}

// jsonSpecificity returns how specifically the media type mt (without
// parameters) matches application/json: 2 for application/json, 1 for
// application/*, 0 for */*, -1 when it does not match.
func jsonSpecificity(mt string) int {
	switch {
	case asciiEqualFold(mt, "application/json"):
		return 2
	case asciiEqualFold(mt, "application/*"):
		return 1
	case mt == "*/*":
		return 0
	}
	return -1
}

// asciiEqualFold reports whether s equals lower, a lower-case ASCII
// string, ignoring the case of ASCII letters only (media types are ASCII
// tokens; Unicode folding would match "ſ" to "s").
func asciiEqualFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// qValue reads the q parameter of a media range's parameters (1 when
// absent); ok is false when q is not a number between 0 and 1.
func qValue(params string) (q float64, ok bool) {
	q = 1
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
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
