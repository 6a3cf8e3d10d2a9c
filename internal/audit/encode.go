package audit

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// appendRecord appends the JSON of r to dst: what json.Marshal writes (the
// same fields, order and omissions), without its reflection, which the
// protected path pays once per record. A test holds the two equal.
func appendRecord(dst []byte, r *Record) []byte {
	dst = append(dst, `{"time":"`...)
	dst = r.Time.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","request_id":`...)
	dst = appendString(dst, r.RequestID)
	dst = appendOpt(dst, `,"sub":`, r.Subject)
	dst = appendOpt(dst, `,"client":`, r.Client)
	if len(r.Tenants) > 0 {
		dst = append(dst, `,"tenants":[`...)
		for i, t := range r.Tenants {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, t)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"operation":`...)
	dst = appendString(dst, r.Operation)
	dst = append(dst, `,"person_id":`...)
	dst = appendString(dst, r.PersonID)
	dst = appendOpt(dst, `,"ssn_mode":`, r.SSNMode)
	if r.DOBDisclosed {
		dst = append(dst, `,"dob_disclosed":true`...)
	}
	dst = appendOpt(dst, `,"purpose":`, r.Purpose)
	dst = append(dst, `,"persons":`...)
	dst = strconv.AppendInt(dst, int64(r.Persons), 10)
	dst = append(dst, `,"replica":`...)
	dst = appendString(dst, r.Replica)
	dst = append(dst, `,"read_model_sequence":`...)
	dst = strconv.AppendUint(dst, r.ReadModelSeq, 10)
	dst = appendOpt(dst, `,"chain":`, r.Chain)
	if r.Seq != 0 {
		dst = strconv.AppendUint(append(dst, `,"seq":`...), r.Seq, 10)
	}
	if r.Index != 0 {
		dst = strconv.AppendInt(append(dst, `,"index":`...), int64(r.Index), 10)
	}
	dst = appendOpt(dst, `,"prev":`, r.Prev)
	return append(dst, '}')
}

// appendOpt appends key and s unless s is empty (omitempty).
func appendOpt(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return appendString(append(dst, key...), s)
}

const hexDigits = "0123456789abcdef"

// jsonSafe says which bytes appendString copies as they are: printable
// ASCII but for the quote, the backslash and json.Marshal's HTML escapes.
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendString appends s as a JSON string, escaped as json.Marshal does:
// quote, backslash, control characters, <, > and &, U+2028 and U+2029,
// and invalid UTF-8 as U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		// A run of bytes that need no escaping (most strings are one) goes
		// in at once.
		j := i
		for j < len(s) && jsonSafe[s[j]] {
			j++
		}
		dst = append(dst, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
