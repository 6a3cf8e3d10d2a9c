// Package jsonstr appends a Go string as a JSON string, byte for byte as
// encoding/json's Marshal writes it, without its reflection. It serves the
// hand-written encoders of the API's answers (query) and of the audit
// records (internal/ledger), which must stay equal to what json.Marshal
// wrote; the standard library offers no such function outside the
// GOEXPERIMENT=jsonv2 packages, whose default escaping differs (no HTML
// escapes).
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// safe says which bytes Append copies as they are: printable ASCII but
// for the quote, the backslash and json.Marshal's HTML escapes.
var safe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// Append appends s to dst as a JSON string exactly as json.Marshal writes
// it: quote, backslash and control characters escaped, HTML-safe (<, >
// and & as \u003c, \u003e, \u0026), U+2028 and U+2029 escaped, invalid
// UTF-8 replaced by U+FFFD. Runs that need no escaping, valid multi-byte
// runes included, are copied at once.
func Append(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; ; {
		for i < len(s) && safe[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			dst = appendEscape(dst, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default: // a valid rune: part of the run
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscape appends the escape of the ASCII byte c, one that is not
// safe.
func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	default: // other control characters, <, > and &
		return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
	}
}
