package events

import (
	"bytes"
	"errors"
	"net/netip"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"
)

// ErrInvalidEvent matches (with errors.Is) every *InvalidEventError.
var ErrInvalidEvent = errors.New("invalid event")

// Is reports whether target is ErrInvalidEvent, so that callers can test
// errors.Is(err, ErrInvalidEvent) without a type assertion.
func (e *InvalidEventError) Is(target error) bool { return target == ErrInvalidEvent }

// SpecVersion is the only CloudEvents specversion of the v1 contract.
const SpecVersion = "1.0"

// ContentTypeJSON is the datacontenttype of the v1 contract.
const ContentTypeJSON = "application/json"

// Decode decodes and validates one message of the stream: subject is the NATS
// subject it was published on, body the CloudEvents 1.0 JSON (structured
// mode). It returns an *InvalidEventError naming the field and reason for
// anything that breaks the v1 contract (docs/events.md). Ids in the
// returned Event are lower-case; Signer.SSN is 9 digits.
//
// Rules, in more detail than docs/events.md:
//
//   - The body is one JSON object (RFC 8259, read by
//     github.com/go-json-experiment/json, the upstream of encoding/json/v2;
//     white space around it allowed, nothing else). As with encoding/json,
//     invalid UTF-8 and lone surrogates in strings are accepted and read as
//     U+FFFD. Unlike encoding/json, no object at any depth may hold the
//     same name twice (RFC 7493, I-JSON): that is refused, naming the path
//     of the duplicate ("appears more than once"), even inside extensions.
//   - Attributes: specversion must be "1.0"; id any non-empty string; source
//     a non-empty URI-reference of RFC 3986 (see sourceOK); type one of
//     Types; time optional (absent or null), else an RFC 3339 date-time as
//     time.Parse(time.RFC3339Nano) reads it once a lower-case "t" or "z" is
//     upper-cased (RFC 3339 section 5.6 allows both cases; returned in UTC);
//     datacontenttype optional (absent or null), else "application/json",
//     optionally followed by parameters ("application/json; charset=utf-8"),
//     compared case-sensitively; entityversion a JSON number that is an
//     integer between 1 and 2^64-1 (1.0 and 1e3 are integers, as in JSON
//     Schema; "1", 1.5 and 0 are not); data a JSON object. Other attributes
//     (CloudEvents extensions) are ignored.
//   - The time attribute follows the standard library, which differs from
//     the JSON Schema format "date-time" of the schemas: it refuses leap
//     seconds (:60), which RFC 3339 allows, and accepts a comma before the
//     fraction, a one-digit hour and zone offsets up to ±24:60, which RFC
//     3339 does not.
//   - Data: unknown fields are ignored (additive evolution within v1).
//     Required strings must be non-empty; a required field that is null is
//     missing. Optional fields that are absent, null or "" are unknown. A
//     value of the wrong JSON type is malformed.
//   - Ids (consumer_id, business_id, contact_id, signer_id) must be
//     canonical UUIDs (8-4-4-4-12 hex digits, any case); they are returned
//     lower-case.
//   - Enums are case-sensitive, exactly as the constants of this package.
//   - social_security_number is exactly 9 digits, written 123456789 or
//     123-45-6789, and is returned as 9 digits. Numbers that the SSA never
//     issues (area 000, 666 or 9xx, group 00, serial 0000) are accepted: the
//     upstream registry is the source of truth and ITINs share the format.
//   - date_of_birth is YYYY-MM-DD, a real calendar date (as
//     time.Parse(time.DateOnly) reads it). A date after today is accepted:
//     validation depends on the event alone, never on the clock, so that
//     every replica, and a rebuild from the stream at any later time, makes
//     the same decision about the same event.
//   - The subject must equal the subject derived from the data ids
//     (Event.Subject), the ids in it compared case-insensitively.
//
// Names of attributes and data fields are case-sensitive, as CloudEvents
// and the JSON Schemas have them: "Type" is not "type" but an unknown
// (ignored) name, unlike encoding/json, which matches names
// case-insensitively. JSON Schema validators cannot see duplicate names, so
// that rule, the subject and the differences of the time attribute above
// are the rules that the schemas do not carry.
//
// Of several faults, Decode reports first a fault of the JSON text (a
// syntax error or a duplicate name, whichever comes first in the body);
// then a value of a wrong JSON type among the attributes, the first in body
// order; then missing or invalid attributes, in the order above; then
// faults of data, in the same way; then the subject. Field in the error is
// "" when the body is not a JSON object, the attribute name for envelope
// faults, "data.<name>" (or "data.address.<name>", "data.phone.<name>")
// for data faults, the dotted path of a duplicate name, and "subject" when
// the subject disagrees with the data. No reason quotes a social security
// number or a date of birth: that of a body that is not JSON is jsontext's
// account of the first syntax error, which quotes at most one character or
// escape sequence of the body (with the JSON pointer and offset of its place).
//
// The returned Event does not retain body, which the caller may reuse.
func Decode(subject string, body []byte) (Event, error) {
	var env *envelope // nil for a JSON null
	if err := json.Unmarshal(body, &env, envelopeOptions...); err != nil {
		// json.Unmarshal stops at the first fault; one of the JSON text
		// further on comes first.
		var v jsontext.Value
		if err2 := json.Unmarshal(body, &v, envelopeOptions...); err2 != nil {
			err = err2
		}
		return Event{}, jsonFault(err, "")
	}
	if env == nil {
		return Event{}, &InvalidEventError{Reason: "body is a JSON null, not an object"}
	}
	ev, err := env.event()
	if err != nil {
		return Event{}, err
	}
	if ev.Data, err = decodeData(ev.Type, body[env.Data.from:env.Data.to]); err != nil {
		return Event{}, err
	}
	if ent := ev.Entity(); !subjectMatches(subject, ent) {
		return Event{}, &InvalidEventError{Field: "subject",
			Reason: "subject " + quote(subject) + " does not match the ids in data (want " + strconv.Quote(ent.Subject()) + ")"}
	}
	return ev, nil
}

// The options of json.Unmarshal: its defaults (names matched exactly,
// unknown names ignored, duplicate names refused) but invalid UTF-8 read as
// U+FFFD, as encoding/json and the JSON Schema validator do; and for data,
// whose names the first pass over the body has checked, no second check.
var (
	envelopeOptions = []json.Options{jsontext.AllowInvalidUTF8(true)}
	dataOptions     = []json.Options{jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)}
)

// jsonFault returns the *InvalidEventError for an error of json.Unmarshal
// reading the body (prefix "") or its data (prefix "data.").
func jsonFault(err error, prefix string) *InvalidEventError {
	var (
		ie *InvalidEventError
		se *jsontext.SyntacticError
		me *json.SemanticError
	)
	switch {
	case errors.As(err, &ie): // from an UnmarshalJSONFrom method below
		return ie
	case errors.As(err, &se) && se.Err == jsontext.ErrDuplicateName:
		return &InvalidEventError{Field: fieldPath(prefix, se.JSONPointer), Reason: "appears more than once"}
	case errors.As(err, &me) && me.JSONPointer == "" && prefix == "":
		return &InvalidEventError{Reason: "body is a JSON " + kindName(me.JSONKind) + ", not an object"}
	case me != nil:
		return &InvalidEventError{Field: fieldPath(prefix, me.JSONPointer),
			Reason: "wrong JSON type: got " + kindName(me.JSONKind) + ", want " + goKindName(me.GoType)}
	}
	// A syntax error: its text names at most one character of a value.
	return &InvalidEventError{Reason: "body is not JSON: " + strings.TrimPrefix(err.Error(), "jsontext: ")}
}

// fieldPath returns the JSON pointer p as a dotted field name after prefix,
// cut to 128 bytes.
func fieldPath(prefix string, p jsontext.Pointer) string {
	f := prefix + strings.Join(slices.Collect(p.Tokens()), ".")
	if len(f) > 128 {
		f = f[:128] + "..."
	}
	return f
}

// subjectMatches reports whether subject equals e.Subject(), ids compared
// case-insensitively, without building e.Subject().
func subjectMatches(subject string, e Entity) bool {
	var rest string
	var ok bool
	switch e.Kind {
	case KindConsumer:
		rest, ok = strings.CutPrefix(subject, SubjectPrefixConsumer)
		return ok && strings.EqualFold(rest, e.ID)
	case KindBusinessContact:
		rest, ok = strings.CutPrefix(subject, SubjectPrefixBusinessContact)
		return ok && strings.EqualFold(rest, e.ID)
	case KindSigner:
		rest, ok = strings.CutPrefix(subject, SubjectPrefixSigner)
		n := len(e.ConsumerID)
		return ok && len(rest) == n+1+len(e.ID) && rest[n] == '.' &&
			strings.EqualFold(rest[:n], e.ConsumerID) && strings.EqualFold(rest[n+1:], e.ID)
	}
	return false
}

// envelope holds the attributes of an event as read from the body, before
// validation. Strings are "" and pointers nil when absent or null.
type envelope struct {
	SpecVersion     string        `json:"specversion"`
	ID              string        `json:"id"`
	Source          string        `json:"source"`
	Type            string        `json:"type"`
	Time            *string       `json:"time"`
	DataContentType *string       `json:"datacontenttype"`
	EntityVersion   entityVersion `json:"entityversion"`
	Data            dataSpan      `json:"data"`
}

// entityVersion is the entityversion attribute: a value of a JSON kind
// other than number is a fault of its JSON type, found in body order; the
// number is judged later, with the other attributes.
type entityVersion struct {
	set bool // present and not null
	v   uint64
	err error // why the number is not a valid entity version
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (e *entityVersion) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	switch k := v.Kind(); k {
	case '0':
		e.set = true
		e.v, e.err = parseEntityVersion(v)
	case 'n':
	default:
		return &InvalidEventError{Field: "entityversion", Reason: "must be a JSON integer, got " + aKind(k)}
	}
	return nil
}

// dataSpan is where the data object lies in the body; to is 0 when data is
// absent or null. Its syntax is checked with the body's; it is read once
// the type is known.
type dataSpan struct{ from, to int }

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (s *dataSpan) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	switch k := v.Kind(); k {
	case '{':
		s.to = int(dec.InputOffset()) // json.Unmarshal reads body from offset 0
		s.from = s.to - len(v)
	case 'n':
	default:
		return &InvalidEventError{Field: "data", Reason: "must be a JSON object, got " + aKind(k)}
	}
	return nil
}

// event checks the envelope attributes and returns the event they make,
// without Data.
func (env *envelope) event() (Event, error) {
	switch env.SpecVersion {
	case SpecVersion:
	case "":
		return Event{}, &InvalidEventError{Field: "specversion", Reason: "is required"}
	default:
		return Event{}, &InvalidEventError{Field: "specversion", Reason: "must be \"1.0\", got " + quote(env.SpecVersion)}
	}
	if env.ID == "" {
		return Event{}, &InvalidEventError{Field: "id", Reason: "is required"}
	}
	if env.Source == "" {
		return Event{}, &InvalidEventError{Field: "source", Reason: "is required"}
	}
	if !sourceOK(env.Source) {
		return Event{}, &InvalidEventError{Field: "source", Reason: "is not a URI-reference"}
	}
	if env.Type == "" {
		return Event{}, &InvalidEventError{Field: "type", Reason: "is required"}
	}
	t, ok := knownType(env.Type)
	if !ok {
		return Event{}, &InvalidEventError{Field: "type", Reason: "unknown event type " + quote(env.Type)}
	}
	var tm time.Time
	if env.Time != nil {
		var err error
		if tm, err = time.Parse(time.RFC3339Nano, upperTZ(*env.Time)); err != nil {
			return Event{}, &InvalidEventError{Field: "time", Reason: "is not an RFC 3339 date-time"}
		}
	}
	if ct := env.DataContentType; ct != nil && !contentTypeOK(*ct) {
		return Event{}, &InvalidEventError{Field: "datacontenttype", Reason: "must be \"application/json\", got " + quote(*ct)}
	}
	if !env.EntityVersion.set {
		return Event{}, &InvalidEventError{Field: "entityversion", Reason: "is required"}
	}
	if env.EntityVersion.err != nil {
		return Event{}, env.EntityVersion.err
	}
	if env.Data.to == 0 {
		return Event{}, &InvalidEventError{Field: "data", Reason: "is required"}
	}
	return Event{ID: env.ID, Source: env.Source, Type: t, Time: tm.UTC(), EntityVersion: env.EntityVersion.v}, nil
}

// upperTZ returns s with a lower-case 't' or 'z' upper-cased, so that
// time.Parse reads the date-time of RFC 3339 section 5.6 in either case.
// Neither letter is valid anywhere else in an RFC 3339 date-time, so this
// accepts nothing more. It allocates only when s holds one of them.
func upperTZ(s string) string {
	if !strings.ContainsAny(s, "tz") {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case 't':
			return 'T'
		case 'z':
			return 'Z'
		}
		return r
	}, s)
}

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
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// lastGoodSource is the last source that sourceOK accepted.
var lastGoodSource atomic.Pointer[string]

// contentTypeOK reports whether ct is application/json, optionally with
// parameters.
func contentTypeOK(ct string) bool {
	rest, ok := strings.CutPrefix(ct, ContentTypeJSON)
	if !ok {
		return false
	}
	rest = strings.TrimLeft(rest, " \t")
	return rest == "" || rest[0] == ';'
}

// knownType returns the Type named s and whether it is one of Types.
func knownType(s string) (Type, bool) {
	switch t := Type(s); t {
	case TypeConsumerUpserted, TypeConsumerDeleted, TypeBusinessContactUpserted,
		TypeBusinessContactDeleted, TypeSignerUpserted, TypeSignerDeleted:
		return t, true
	}
	return "", false
}

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

// signerData is the data of a signer upsert as read: HIPAA tells a
// missing hipaa_authorized (nil) from false.
type signerData struct {
	Signer
	HIPAA *bool `json:"hipaa_authorized"`
}

// decodeData reads data, the data object of an event of type t, and
// returns it, validated, as the data type of t. It reports the first value
// of a wrong JSON type, in body order, before other faults.
func decodeData(t Type, data []byte) (any, error) {
	switch t {
	case TypeConsumerUpserted:
		return readData(data, (*Consumer).validate)
	case TypeConsumerDeleted:
		return readData(data, (*ConsumerDeleted).validate)
	case TypeBusinessContactUpserted:
		return readData(data, (*BusinessContact).validate)
	case TypeBusinessContactDeleted:
		return readData(data, (*BusinessContactDeleted).validate)
	case TypeSignerUpserted:
		s, err := readData(data, (*signerData).validate)
		return s.Signer, err
	case TypeSignerDeleted:
		return readData(data, (*SignerDeleted).validate)
	}
	return nil, &InvalidEventError{Field: "type", Reason: "unknown event type"} // not reached: t is one of Types
}

// readData reads data into a T (unknown names ignored, null as absent) and
// checks it with check.
func readData[T any](data []byte, check func(*T) error) (T, error) {
	var v T
	if err := json.Unmarshal(data, &v, dataOptions...); err != nil {
		return v, jsonFault(err, "data.")
	}
	return v, check(&v)
}

func (c *Consumer) validate() error {
	if err := checkID(&c.ConsumerID, "consumer_id"); err != nil {
		return err
	}
	if err := checkID(&c.BusinessID, "business_id"); err != nil {
		return err
	}
	return checkNames(c.FirstName, c.LastName)
}

func (c *BusinessContact) validate() error {
	if err := checkID(&c.ContactID, "contact_id"); err != nil {
		return err
	}
	if err := checkID(&c.BusinessID, "business_id"); err != nil {
		return err
	}
	return checkNames(c.FirstName, c.LastName)
}

func (c *ConsumerDeleted) validate() error { return checkID(&c.ConsumerID, "consumer_id") }

func (c *BusinessContactDeleted) validate() error { return checkID(&c.ContactID, "contact_id") }

func (s *SignerDeleted) validate() error {
	if err := checkID(&s.SignerID, "signer_id"); err != nil {
		return err
	}
	return checkID(&s.ConsumerID, "consumer_id")
}

func (s *signerData) validate() error {
	if err := checkID(&s.SignerID, "signer_id"); err != nil {
		return err
	}
	if err := checkID(&s.ConsumerID, "consumer_id"); err != nil {
		return err
	}
	if err := checkNames(s.FirstName, s.LastName); err != nil {
		return err
	}
	if s.HIPAA == nil {
		return &InvalidEventError{Field: "data.hipaa_authorized", Reason: "is required"}
	}
	s.HIPAAAuthorized = *s.HIPAA
	if err := checkEnum("account_access", string(s.AccountAccess), s.AccountAccess.Valid()); err != nil {
		return err
	}
	if err := checkEnum("status", string(s.Status), s.Status.Valid()); err != nil {
		return err
	}
	if err := checkEnum("type", string(s.Type), s.Type.Valid()); err != nil {
		return err
	}
	if a := s.Address; a != nil {
		if err := a.validate(); err != nil {
			return err
		}
	}
	if p := s.Phone; p != nil {
		if err := p.validate(); err != nil {
			return err
		}
	}
	if s.SSN != "" {
		ssn, ok := NormalizeSSN(s.SSN)
		if !ok {
			return &InvalidEventError{Field: "data.social_security_number", Reason: "must be 9 digits, written 123456789 or 123-45-6789"}
		}
		s.SSN = ssn
	}
	if s.DateOfBirth != "" {
		if reason := checkDateOfBirth(s.DateOfBirth); reason != "" {
			return &InvalidEventError{Field: "data.date_of_birth", Reason: reason}
		}
	}
	return nil
}

func checkNames(first, last string) error {
	if first == "" {
		return &InvalidEventError{Field: "data.first_name", Reason: "is required"}
	}
	if last == "" {
		return &InvalidEventError{Field: "data.last_name", Reason: "is required"}
	}
	return nil
}

func (a *Address) validate() error {
	for _, f := range [...]struct{ name, v string }{
		{"line1", a.Line1}, {"city", a.City}, {"state", a.State}, {"zip_code", a.ZipCode}, {"country", a.Country},
	} {
		if f.v == "" {
			return &InvalidEventError{Field: "data.address." + f.name, Reason: "is required"}
		}
	}
	return nil
}

func (p *Phone) validate() error {
	for _, f := range [...]struct{ name, v string }{
		{"country_code", p.CountryCode}, {"area_code", p.AreaCode}, {"number", p.Number},
	} {
		if f.v == "" {
			return &InvalidEventError{Field: "data.phone." + f.name, Reason: "is required"}
		}
	}
	return nil
}

// checkEnum checks the value v of the enum data field name; valid tells
// whether v is one of its values.
func checkEnum(name, v string, valid bool) error {
	if v == "" {
		return &InvalidEventError{Field: "data." + name, Reason: "is required"}
	}
	if !valid {
		return &InvalidEventError{Field: "data." + name, Reason: "unknown value " + quote(v)}
	}
	return nil
}

// checkID lower-cases *id, the id data field name, if it is a canonical
// UUID, and otherwise returns an *InvalidEventError.
func checkID(id *string, name string) error {
	if *id == "" {
		return &InvalidEventError{Field: "data." + name, Reason: "is required"}
	}
	if !ValidUUID(*id) {
		return &InvalidEventError{Field: "data." + name, Reason: "must be a UUID written 8-4-4-4-12 hex digits, got " + quote(*id)}
	}
	*id = strings.ToLower(*id)
	return nil
}

// ValidUUID reports whether s is a UUID in canonical form: 36 characters,
// hex digits of any case in groups of 8-4-4-4-12 separated by '-'. Other
// forms (urn:uuid:, braces, no dashes) are not valid. The version and
// variant bits are not checked.
func ValidUUID(s string) bool { return len(s) == 36 && uuid.Validate(s) == nil }

// NormalizeSSN returns the 9 digits of a social security number written
// either 123456789 or 123-45-6789, and whether s was one of those forms.
func NormalizeSSN(s string) (string, bool) {
	switch len(s) {
	case 9:
		if !allDigits(s) {
			return "", false
		}
		return s, true
	case 11:
		if s[3] != '-' || s[6] != '-' || !allDigits(s[:3]) || !allDigits(s[4:6]) || !allDigits(s[7:]) {
			return "", false
		}
		return s[:3] + s[4:6] + s[7:], true
	}
	return "", false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkDateOfBirth returns "" if s is a YYYY-MM-DD calendar date, else the
// reason it is not (which never quotes s). It does not look at the clock.
func checkDateOfBirth(s string) string {
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return "must be a calendar date written YYYY-MM-DD"
	}
	return ""
}

// kindName names a JSON kind as a JSON Schema type.
func kindName(k jsontext.Kind) string {
	switch k {
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

// aKind names kind k with its article.
func aKind(k jsontext.Kind) string {
	if k == '{' || k == '[' {
		return "an " + kindName(k)
	}
	return "a " + kindName(k)
}

// goKindName names the JSON type that Go type t reads.
func goKindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Struct:
		return "object"
	}
	return t.Kind().String()
}

// quote returns s quoted for an error reason, cut to 64 bytes so that a
// hostile value cannot bloat logs.
func quote(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + "..."
	}
	return strconv.Quote(s)
}
