package events

import (
	"bytes"
	"strconv"
)

// parseEntityVersion parses the entityversion attribute, raw being the
// text of a JSON number: it must be an integer in [1, 2^64-1]. Numbers with
// a fraction or exponent count by their exact mathematical value, as in
// JSON Schema: 1.0 and 1e3 are integers, 1.5 and 1e-3 are not (however many
// digits it takes to tell).
func parseEntityVersion(raw []byte) (uint64, error) {
	v, status := exactUint(raw)
	var reason string
	switch status {
	case numOK:
		return v, nil
	case numZero, numNegative:
		reason = "must be at least 1"
	case numFraction:
		reason = "must be an integer"
	default:
		reason = "is out of range (max 18446744073709551615)"
	}
	got := string(raw)
	if len(got) > 40 {
		got = got[:40] + "..."
	}
	return 0, &InvalidEventError{Field: "entityversion", Reason: reason + ", got " + got}
}

// What exactUint found.
const (
	numOK = iota
	numZero
	numNegative
	numFraction
	numTooBig
)

// exactUint returns the value of the JSON number text n if it is a positive
// integer that fits in uint64, and otherwise why not. It decides exactly,
// without floating point: n is read as its significant digits D times
// 10^k.
func exactUint(n []byte) (uint64, int) {
	if len(n) <= 20 && allDigitBytes(n) { // the common case: a plain integer
		v, err := strconv.ParseUint(string(n), 10, 64)
		switch {
		case err != nil:
			return 0, numTooBig
		case v == 0:
			return 0, numZero
		}
		return v, numOK
	}
	neg := n[0] == '-'
	if neg {
		n = n[1:]
	}
	mant, exp := n, []byte(nil)
	if i := bytes.IndexAny(n, "eE"); i >= 0 {
		mant, exp = n[:i], n[i+1:]
	}
	intPart, frac := mant, []byte(nil)
	if i := bytes.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	digits := make([]byte, 0, len(intPart)+len(frac))
	for _, part := range [2][]byte{intPart, frac} {
		for _, c := range part {
			if c != '0' || len(digits) > 0 { // drop leading zeros
				digits = append(digits, c)
			}
		}
	}
	if len(digits) == 0 {
		return 0, numZero
	}
	if neg {
		return 0, numNegative
	}
	// The exponent, saturating far beyond the length of any body.
	const maxExp = 1 << 40
	e, eneg := 0, false
	if len(exp) > 0 && (exp[0] == '+' || exp[0] == '-') {
		eneg = exp[0] == '-'
		exp = exp[1:]
	}
	for _, c := range exp {
		if e < maxExp {
			e = e*10 + int(c-'0')
		}
	}
	if eneg {
		e = -e
	}
	k := e - len(frac)
	for digits[len(digits)-1] == '0' { // trailing zeros move into k
		digits = digits[:len(digits)-1]
		k++
	}
	if k < 0 {
		return 0, numFraction
	}
	if len(digits)+k > 20 {
		return 0, numTooBig
	}
	for ; k > 0; k-- {
		digits = append(digits, '0')
	}
	v, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return 0, numTooBig
	}
	return v, numOK
}

func allDigitBytes(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
