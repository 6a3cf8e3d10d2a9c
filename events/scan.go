package events

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner is a strict, allocation-lean JSON (RFC 8259) reader over one
// message body, made for Decode's hot path. It accepts exactly what
// encoding/json's Valid accepts (a test checks this by fuzzing), decodes
// strings as encoding/json does (invalid UTF-8 and lone surrogates become
// U+FFFD), and compares object keys exactly.
//
// Strings without escapes are returned as substrings of str, one copy of the
// whole body made once, so that decoding a message allocates a handful of
// times rather than once per field. A decoded event therefore keeps its
// body's copy alive as long as it keeps any of its strings.
type scanner struct {
	data []byte
	str  string // string(data), made lazily by the first string read
	pos  int
}

// maxDepth bounds nesting, as encoding/json does (10000), so that a hostile
// body cannot exhaust the stack.
const maxDepth = 10000

// syntaxError is a fault of JSON syntax at byte offset off.
type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string {
	return e.msg + " at offset " + strconv.Itoa(e.off)
}

func (s *scanner) errorf(msg string) *syntaxError {
	return &syntaxError{msg: msg, off: s.pos}
}

// ws skips white space.
func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

// expect consumes byte c after white space.
func (s *scanner) expect(c byte) *syntaxError {
	if s.peek() != c {
		if s.pos >= len(s.data) {
			return s.errorf("unexpected end of JSON input")
		}
		return s.errorf("invalid character " + strconv.QuoteRune(rune(s.data[s.pos])) + ", want " + strconv.QuoteRune(rune(c)))
	}
	s.pos++
	return nil
}

// literal consumes the literal lit (true, false or null) at pos.
func (s *scanner) literal(lit string) *syntaxError {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return s.errorf("invalid literal, want " + lit)
	}
	s.pos += len(lit)
	return nil
}

// string reads the JSON string at pos (which must be '"') and returns its
// value.
func (s *scanner) string() (string, *syntaxError) {
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		return "", s.errorf("want a string")
	}
	start := s.pos + 1
	ascii := true
	for i := start; i < len(s.data); i++ {
		c := s.data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			if !ascii && !utf8.Valid(s.data[start:i]) {
				return s.unquote(start)
			}
			if s.str == "" {
				s.str = string(s.data)
			}
			return s.str[start:i], nil
		case c == '\\':
			return s.unquote(start)
		case c < 0x20:
			s.pos = i
			return "", s.errorf("invalid control character in string")
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	s.pos = len(s.data)
	return "", s.errorf("unexpected end of JSON input")
}

// unquote is the slow path of string: it decodes the string whose content
// starts at start, with escapes and invalid UTF-8, as encoding/json does.
func (s *scanner) unquote(start int) (string, *syntaxError) {
	b := make([]byte, 0, 32)
	i := start
	for i < len(s.data) {
		c := s.data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return string(b), nil
		case c < 0x20:
			s.pos = i
			return "", s.errorf("invalid control character in string")
		case c == '\\':
			if i+1 >= len(s.data) {
				s.pos = len(s.data)
				return "", s.errorf("unexpected end of JSON input")
			}
			switch e := s.data[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(s.data, i+2)
				if !ok {
					s.pos = i
					return "", s.errorf("invalid \\u escape in string")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// A pair only if a \u low surrogate follows.
					if r2, ok := hex4(s.data, i+2); ok && i+1 < len(s.data) && s.data[i] == '\\' && s.data[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				s.pos = i
				return "", s.errorf("invalid escape in string")
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(s.data[i:])
			b = utf8.AppendRune(b, r) // RuneError for invalid UTF-8
			i += size
		}
	}
	s.pos = len(s.data)
	return "", s.errorf("unexpected end of JSON input")
}

// hex4 returns the value of the four hex digits at data[i:i+4].
func hex4(data []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// number reads the JSON number at pos and returns its text.
func (s *scanner) number() ([]byte, *syntaxError) {
	start := s.pos
	d := s.data
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		s.pos = i
		return nil, s.errorf("invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			s.pos = i
			return nil, s.errorf("invalid number: no digits after the decimal point")
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			s.pos = i
			return nil, s.errorf("invalid number: no digits in the exponent")
		}
	}
	s.pos = i
	return d[start:i], nil
}

// skip reads and discards the value at pos (after white space), checking
// its syntax.
func (s *scanner) skip(depth int) *syntaxError {
	if depth >= maxDepth {
		return s.errorf("exceeded max depth")
	}
	switch c := s.peek(); c {
	case '{':
		s.pos++
		if s.peek() == '}' {
			s.pos++
			return nil
		}
		for {
			s.ws()
			if err := s.skipString(); err != nil {
				return err
			}
			if err := s.expect(':'); err != nil {
				return err
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case '}':
				s.pos++
				return nil
			default:
				return s.errorf("invalid character after object value, want ',' or '}'")
			}
		}
	case '[':
		s.pos++
		if s.peek() == ']' {
			s.pos++
			return nil
		}
		for {
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case ']':
				s.pos++
				return nil
			default:
				return s.errorf("invalid character after array element, want ',' or ']'")
			}
		}
	case '"':
		return s.skipString()
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case 0:
		if s.pos >= len(s.data) {
			return s.errorf("unexpected end of JSON input")
		}
	}
	if c := s.data[s.pos]; c == '-' || c >= '0' && c <= '9' {
		_, err := s.number()
		return err
	}
	return s.errorf("invalid character " + strconv.QuoteRune(rune(s.data[s.pos])) + " looking for beginning of value")
}

// skipString checks the syntax of the string at pos and moves past it.
func (s *scanner) skipString() *syntaxError {
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		if s.pos >= len(s.data) {
			return s.errorf("unexpected end of JSON input")
		}
		return s.errorf("invalid character " + strconv.QuoteRune(rune(s.data[s.pos])) + ", want a string")
	}
	for i := s.pos + 1; i < len(s.data); i++ {
		switch c := s.data[i]; {
		case c == '"':
			s.pos = i + 1
			return nil
		case c < 0x20:
			s.pos = i
			return s.errorf("invalid control character in string")
		case c == '\\':
			i++
			if i >= len(s.data) {
				break
			}
			switch s.data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if _, ok := hex4(s.data, i+1); !ok {
					s.pos = i
					return s.errorf("invalid \\u escape in string")
				}
				i += 4
			default:
				s.pos = i
				return s.errorf("invalid escape in string")
			}
		}
	}
	s.pos = len(s.data)
	return s.errorf("unexpected end of JSON input")
}

// aKind names, with its article, the kind of JSON value that starts with
// byte c.
func aKind(c byte) string {
	switch k := kind(c); k {
	case "object", "array":
		return "an " + k
	default:
		return "a " + k
	}
}

// kind names the kind of JSON value that starts with byte c.
func kind(c byte) string {
	switch c {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
