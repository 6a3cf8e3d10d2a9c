package events

import (
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
)

// sourceOK reports whether s is a URI-reference of RFC 3986 in the
// characters it may hold and where: only ASCII letters, digits,
// -._~!$&'()*+,;=:@/? and percent-escapes of two hex digits anywhere;
// '[' and ']' only in the authority (an IP-literal host); at most one '#'.
// So no space, control character, non-ASCII byte, '"', '<', '>', '\', '^',
// '`', '{', '|' or '}', and no malformed '%'. It must also satisfy url.Parse
// (scheme, colon in the first segment, port), as the JSON Schema format
// "uri-reference" of the schemas does; the schemas' pattern
// states the character rules. A host with a colon must be an IPv6 address
// in brackets, without a zone id. A producer names itself the same way in
// every event, so the last source found good is remembered and not checked
// again.
func sourceOK(s string) bool {
	if p := lastGoodSource.Load(); p != nil && *p == s {
		return true
	}
	if !uriChars(s) {
		return false
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	// url.Parse does not check an IPv6 host; RFC 3986 has no zone id.
	if h := u.Hostname(); strings.ContainsRune(h, ':') {
		a, err := netip.ParseAddr(h)
		if err != nil || a.Zone() != "" || !strings.HasPrefix(u.Host, "[") {
			return false
		}
	}
	lastGoodSource.Store(&s)
	return true
}

// uriChars reports whether s holds only the characters of an RFC 3986
// URI-reference where they may appear (see sourceOK). It mirrors the
// pattern of "source" in the schemas:
//
//	^([A-Za-z][A-Za-z0-9+.-]*:)?(//(A|[\[\]]|%HH)*)?(A|[/?]|%HH)*(#(A|[/?]|%HH)*)?$
//
// where A is [A-Za-z0-9._~!$&'()*+,;=:@-] and H a hex digit.
func uriChars(s string) bool {
	i := 0
	// An optional scheme.
	if j := strings.IndexByte(s, ':'); j > 0 && isAlpha(s[0]) {
		k := 1
		for k < j && (isAlpha(s[k]) || isDigit(s[k]) || s[k] == '+' || s[k] == '.' || s[k] == '-') {
			k++
		}
		if k == j {
			i = j + 1
		}
	}
	// An optional authority, which alone may hold '[' and ']'.
	if strings.HasPrefix(s[i:], "//") {
		i += 2
		for i < len(s) && s[i] != '/' && s[i] != '?' && s[i] != '#' {
			switch c := s[i]; {
			case c == '[' || c == ']' || uriChar(c):
				i++
			case c == '%' && pctEscape(s[i:]):
				i += 3
			default:
				return false
			}
		}
	}
	// Path, query and fragment.
	hash := false
	for i < len(s) {
		switch c := s[i]; {
		case uriChar(c) || c == '/' || c == '?':
			i++
		case c == '#' && !hash:
			hash = true
			i++
		case c == '%' && pctEscape(s[i:]):
			i += 3
		default:
			return false
		}
	}
	return true
}

// uriChar reports whether c is an unreserved or sub-delims character of
// RFC 3986, ':' or '@' (a pchar other than a percent-escape).
func uriChar(c byte) bool {
	if isAlpha(c) || isDigit(c) {
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0
}

// pctEscape reports whether s starts with '%' and two hex digits.
func pctEscape(s string) bool {
	return len(s) >= 3 && s[0] == '%' && isHex(s[1]) && isHex(s[2])
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// lastGoodSource is the last source that sourceOK accepted.
var lastGoodSource atomic.Pointer[string]
