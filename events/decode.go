package events

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
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
// anything that breaks the v1 contract (PRODUCT.md section 2). Ids in the
// returned Event are lower-case; Signer.SSN is 9 digits.
//
// Rules, where PRODUCT.md is silent:
//
//   - The body is one JSON object (RFC 8259, as encoding/json.Valid
//     accepts it; white space around it allowed, nothing else).
//   - Attributes: specversion must be "1.0"; id any non-empty string; source
//     a non-empty URI-reference (as net/url parses it, no backslash); type
//     one of Types; time optional (absent or null), else an RFC 3339
//     date-time (see parseRFC3339; returned in UTC); datacontenttype optional
//     (absent or null), else "application/json", optionally followed by
//     parameters ("application/json; charset=utf-8"), compared
//     case-sensitively; entityversion a JSON number that is an integer
//     between 1 and 2^64-1 (1.0 and 1e3 are integers, as in JSON Schema;
//     "1", 1.5 and 0 are not); data a JSON object. Other attributes
//     (CloudEvents extensions) are ignored.
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
//   - date_of_birth is YYYY-MM-DD, a real calendar date, and not in the
//     future: not after today's date in UTC+14, the earliest time zone, so
//     that no one born today anywhere is refused.
//   - The subject must equal the subject derived from the data ids
//     (Event.Subject), the ids in it compared case-insensitively.
//
// Names of attributes and data fields are case-sensitive, as CloudEvents
// and the JSON Schemas have them: "Type" is not "type" but an unknown
// (ignored) name, unlike encoding/json, which matches names
// case-insensitively. A name of the contract that appears twice in one
// object is refused rather than guessed at ("appears more than once");
// JSON Schema validators cannot see duplicates, so this is the one rule
// besides the subject and the future date of birth that the schemas do not
// carry.
//
// Of several faults, Decode reports a syntax error first; then faults of
// the envelope (a value of a wrong JSON type or a duplicate name, the first
// in body order, before missing or invalid attributes in the order above);
// then faults of data, in the same way; then the subject. Field in the error is
// "" when the body is not a JSON object, the attribute name for envelope
// faults, "data.<name>" (or "data.address.<name>", "data.phone.<name>")
// for data faults and "subject" when the subject disagrees with the data.
// No reason quotes a social security number or a date of birth.
//
// Strings of the returned Event share one copy of body (see scanner); body
// itself is not retained and may be reused by the caller.
func Decode(subject string, body []byte) (Event, error) {
	s := scanner{data: body}
	var env envelope
	if err := s.envelope(&env); err != nil {
		return Event{}, err
	}
	var ev Event
	if err := env.validate(&ev); err != nil {
		return Event{}, err
	}
	s.pos = env.dataAt
	if err := s.decodeData(&ev); err != nil {
		return Event{}, err
	}
	if ent := ev.Entity(); !subjectMatches(subject, ent) {
		return Event{}, &InvalidEventError{Field: "subject",
			Reason: "subject " + quote(subject) + " does not match the ids in data (want " + strconv.Quote(ent.Subject()) + ")"}
	}
	return ev, nil
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
// validation.
type envelope struct {
	specVersion, id, source, typ string // "" when absent or null
	time, dataContentType        string
	hasTime, hasDataContentType  bool   // present and not null
	entityVersion                []byte // the number's text; nil when absent or null
	dataAt                       int    // offset of the data object; -1 when absent or null
	fault                        *InvalidEventError
}

// Bits for the attributes of the contract, to find duplicates.
const (
	attrSpecVersion = 1 << iota
	attrID
	attrSource
	attrType
	attrTime
	attrDataContentType
	attrEntityVersion
	attrData
)

func attrBit(name string) int {
	switch name {
	case "specversion":
		return attrSpecVersion
	case "id":
		return attrID
	case "source":
		return attrSource
	case "type":
		return attrType
	case "time":
		return attrTime
	case "datacontenttype":
		return attrDataContentType
	case "entityversion":
		return attrEntityVersion
	case "data":
		return attrData
	}
	return 0
}

// notJSON is the error for a body that is not JSON.
func notJSON(err *syntaxError) error {
	return &InvalidEventError{Reason: "body is not JSON: " + err.Error()}
}

// wrongType returns the error for a value of JSON kind got where want was
// expected.
func wrongType(field, got, want string) *InvalidEventError {
	return &InvalidEventError{Field: field, Reason: "wrong JSON type: got " + got + ", want " + want}
}

func duplicate(field string) *InvalidEventError {
	return &InvalidEventError{Field: field, Reason: "appears more than once"}
}

// envelope reads the whole body as an event envelope into env. It returns
// syntax errors, and otherwise the first fault of a value's JSON type or a
// duplicate name, in body order. The data object is only checked for
// syntax; its offset is kept in env.dataAt.
func (s *scanner) envelope(env *envelope) error {
	env.dataAt = -1
	if c := s.peek(); c != '{' {
		if err := s.skip(0); err != nil {
			return notJSON(err)
		}
		if err := s.end(); err != nil {
			return notJSON(err)
		}
		return &InvalidEventError{Reason: "body is a JSON " + kind(c) + ", not an object"}
	}
	s.pos++
	seen := 0
	if s.peek() == '}' {
		s.pos++
	} else {
		for {
			s.ws()
			name, err := s.string()
			if err != nil {
				return notJSON(err)
			}
			if err := s.expect(':'); err != nil {
				return notJSON(err)
			}
			bit := attrBit(name)
			if bit != 0 && seen&bit != 0 && env.fault == nil {
				env.fault = duplicate(name)
			}
			seen |= bit
			var fault *InvalidEventError
			switch bit {
			case 0:
				err = s.skip(1)
			case attrSpecVersion:
				fault, err = s.attrString(name, &env.specVersion, nil)
			case attrID:
				fault, err = s.attrString(name, &env.id, nil)
			case attrSource:
				fault, err = s.attrString(name, &env.source, nil)
			case attrType:
				fault, err = s.attrString(name, &env.typ, nil)
			case attrTime:
				fault, err = s.attrString(name, &env.time, &env.hasTime)
			case attrDataContentType:
				fault, err = s.attrString(name, &env.dataContentType, &env.hasDataContentType)
			case attrEntityVersion:
				switch c := s.peek(); {
				case c == 'n':
					env.entityVersion = nil
					err = s.literal("null")
				case c == '-' || c >= '0' && c <= '9':
					env.entityVersion, err = s.number()
				default:
					fault = &InvalidEventError{Field: name, Reason: "must be a JSON integer, got " + aKind(c)}
					err = s.skip(1)
				}
			case attrData:
				switch c := s.peek(); c {
				case 'n':
					env.dataAt = -1
					err = s.literal("null")
				case '{':
					env.dataAt = s.pos
					err = s.skip(1)
				default:
					fault = &InvalidEventError{Field: name, Reason: "must be a JSON object, got " + aKind(c)}
					err = s.skip(1)
				}
			}
			if err != nil {
				return notJSON(err)
			}
			if fault != nil && env.fault == nil {
				env.fault = fault
			}
			switch s.peek() {
			case ',':
				s.pos++
				continue
			case '}':
				s.pos++
			default:
				if s.pos >= len(s.data) {
					return notJSON(s.errorf("unexpected end of JSON input"))
				}
				return notJSON(s.errorf("invalid character after object value, want ',' or '}'"))
			}
			break
		}
	}
	if err := s.end(); err != nil {
		return notJSON(err)
	}
	if env.fault != nil {
		return env.fault
	}
	return nil
}

// end checks that only white space follows.
func (s *scanner) end() *syntaxError {
	s.ws()
	if s.pos != len(s.data) {
		return s.errorf("invalid character after top-level value")
	}
	return nil
}

// attrString reads a string or null into *dst; *present (when not nil)
// tells whether it was a string. A value of another kind is a fault named
// field, skipped.
func (s *scanner) attrString(field string, dst *string, present *bool) (*InvalidEventError, *syntaxError) {
	switch c := s.peek(); c {
	case '"':
		v, err := s.string()
		*dst = v
		if present != nil {
			*present = true
		}
		return nil, err
	case 'n':
		*dst = ""
		if present != nil {
			*present = false
		}
		return nil, s.literal("null")
	default:
		return wrongType(field, kind(c), "string"), s.skip(1)
	}
}

// validate checks the envelope attributes and fills in ev from them.
func (env *envelope) validate(ev *Event) error {
	switch env.specVersion {
	case SpecVersion:
	case "":
		return &InvalidEventError{Field: "specversion", Reason: "is required"}
	default:
		return &InvalidEventError{Field: "specversion", Reason: "must be \"1.0\", got " + quote(env.specVersion)}
	}
	if env.id == "" {
		return &InvalidEventError{Field: "id", Reason: "is required"}
	}
	ev.ID = env.id
	if env.source == "" {
		return &InvalidEventError{Field: "source", Reason: "is required"}
	}
	if !sourceOK(env.source) {
		return &InvalidEventError{Field: "source", Reason: "is not a URI-reference"}
	}
	ev.Source = env.source
	if env.typ == "" {
		return &InvalidEventError{Field: "type", Reason: "is required"}
	}
	t, ok := knownType(env.typ)
	if !ok {
		return &InvalidEventError{Field: "type", Reason: "unknown event type " + quote(env.typ)}
	}
	ev.Type = t
	if env.hasTime {
		tm, ok := parseRFC3339(env.time)
		if !ok {
			return &InvalidEventError{Field: "time", Reason: "is not an RFC 3339 date-time"}
		}
		ev.Time = tm
	}
	if env.hasDataContentType && !contentTypeOK(env.dataContentType) {
		return &InvalidEventError{Field: "datacontenttype", Reason: "must be \"application/json\", got " + quote(env.dataContentType)}
	}
	v, err := parseEntityVersion(env.entityVersion)
	if err != nil {
		return err
	}
	ev.EntityVersion = v
	if env.dataAt < 0 {
		return &InvalidEventError{Field: "data", Reason: "is required"}
	}
	return nil
}

// sourceOK reports whether s is a URI-reference: url.Parse accepts it and
// it holds no backslash, as the JSON Schema format "uri-reference" of the
// schemas has it. A producer names itself the same way in every event, so
// the last source found good is remembered and not parsed again.
func sourceOK(s string) bool {
	if p := lastGoodSource.Load(); p != nil && *p == s {
		return true
	}
	if strings.ContainsRune(s, '\\') {
		return false
	}
	if _, err := url.Parse(s); err != nil {
		return false
	}
	c := strings.Clone(s) // not a substring that would keep a whole body alive
	lastGoodSource.Store(&c)
	return true
}

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
// text of a JSON number (or nil when absent or null): it must be an integer
// in [1, 2^64-1]. Numbers with a fraction or exponent count by their exact
// mathematical value, as in JSON Schema: 1.0 and 1e3 are integers, 1.5 and
// 1e-3 are not (however many digits it takes to tell).
func parseEntityVersion(raw []byte) (uint64, error) {
	const field = "entityversion"
	if len(raw) == 0 || string(raw) == "null" {
		return 0, &InvalidEventError{Field: field, Reason: "is required"}
	}
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, &InvalidEventError{Field: field, Reason: "must be a JSON integer, got " + aKind(c)}
	}
	got := string(raw)
	if len(got) > 40 {
		got = got[:40] + "..."
	}
	v, status := exactUint(raw)
	switch status {
	case numZero:
		return 0, &InvalidEventError{Field: field, Reason: "must be at least 1, got " + got}
	case numNegative:
		return 0, &InvalidEventError{Field: field, Reason: "must be at least 1, got " + got}
	case numFraction:
		return 0, &InvalidEventError{Field: field, Reason: "must be an integer, got " + got}
	case numTooBig:
		return 0, &InvalidEventError{Field: field, Reason: "is out of range (max 18446744073709551615), got " + got}
	}
	return v, nil
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
	if i := indexAny(n, 'e', 'E'); i >= 0 {
		mant, exp = n[:i], n[i+1:]
	}
	intPart, frac := mant, []byte(nil)
	if i := indexAny(mant, '.', '.'); i >= 0 {
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

// indexAny returns the index of the first a or b in s, or -1.
func indexAny(s []byte, a, b byte) int {
	for i, c := range s {
		if c == a || c == b {
			return i
		}
	}
	return -1
}

// Data fields of the contract, as indexes into dataFields.v.
const (
	fConsumerID = iota
	fBusinessID
	fContactID
	fSignerID
	fFirstName
	fMiddleName
	fLastName
	fAccountAccess
	fStatus
	fType
	fSSN
	fDateOfBirth
	fHIPAA   // boolean
	fAddress // object
	fPhone   // object
	nFields
)

// dataFieldNames are the JSON names of the data fields.
var dataFieldNames = [nFields]string{
	fConsumerID: "consumer_id", fBusinessID: "business_id", fContactID: "contact_id", fSignerID: "signer_id",
	fFirstName: "first_name", fMiddleName: "middle_name", fLastName: "last_name",
	fAccountAccess: "account_access", fStatus: "status", fType: "type",
	fSSN: "social_security_number", fDateOfBirth: "date_of_birth",
	fHIPAA: "hipaa_authorized", fAddress: "address", fPhone: "phone",
}

// dataFieldIndex returns the field named name, or -1.
func dataFieldIndex(name string) int {
	switch name {
	case "consumer_id":
		return fConsumerID
	case "business_id":
		return fBusinessID
	case "contact_id":
		return fContactID
	case "signer_id":
		return fSignerID
	case "first_name":
		return fFirstName
	case "middle_name":
		return fMiddleName
	case "last_name":
		return fLastName
	case "account_access":
		return fAccountAccess
	case "status":
		return fStatus
	case "type":
		return fType
	case "social_security_number":
		return fSSN
	case "date_of_birth":
		return fDateOfBirth
	case "hipaa_authorized":
		return fHIPAA
	case "address":
		return fAddress
	case "phone":
		return fPhone
	}
	return -1
}

// fieldsOf returns the set (bit i for field i) of the data fields of events
// of type t; other names in its data are unknown and ignored.
func fieldsOf(t Type) int {
	const names = 1<<fFirstName | 1<<fMiddleName | 1<<fLastName
	switch t {
	case TypeConsumerUpserted:
		return 1<<fConsumerID | 1<<fBusinessID | names
	case TypeConsumerDeleted:
		return 1 << fConsumerID
	case TypeBusinessContactUpserted:
		return 1<<fContactID | 1<<fBusinessID | names
	case TypeBusinessContactDeleted:
		return 1 << fContactID
	case TypeSignerUpserted:
		return 1<<fSignerID | 1<<fConsumerID | names | 1<<fHIPAA | 1<<fAccountAccess | 1<<fStatus | 1<<fType |
			1<<fAddress | 1<<fPhone | 1<<fSSN | 1<<fDateOfBirth
	case TypeSignerDeleted:
		return 1<<fSignerID | 1<<fConsumerID
	}
	return 0
}

// dataFields holds the data of an event as read from the body, before
// validation. Strings are "" when absent or null.
type dataFields struct {
	v       [nFields]string
	hipaa   int8 // 0 absent or null, 1 false, 2 true
	address *Address
	phone   *Phone
}

// decodeData reads the data object at pos (whose syntax envelope has
// checked) for an event of type ev.Type, validates it and sets ev.Data.
func (s *scanner) decodeData(ev *Event) error {
	var d dataFields
	if err := s.dataObject(&d, fieldsOf(ev.Type)); err != nil {
		return err
	}
	var err error
	switch ev.Type {
	case TypeConsumerUpserted:
		var c Consumer
		c, err = d.consumer()
		ev.Data = c
	case TypeConsumerDeleted:
		var c ConsumerDeleted
		c.ConsumerID, err = checkID(fConsumerID, d.v[fConsumerID])
		ev.Data = c
	case TypeBusinessContactUpserted:
		var c BusinessContact
		c, err = d.businessContact()
		ev.Data = c
	case TypeBusinessContactDeleted:
		var c BusinessContactDeleted
		c.ContactID, err = checkID(fContactID, d.v[fContactID])
		ev.Data = c
	case TypeSignerUpserted:
		var sg Signer
		sg, err = d.signer()
		ev.Data = sg
	case TypeSignerDeleted:
		var sd SignerDeleted
		if sd.SignerID, err = checkID(fSignerID, d.v[fSignerID]); err == nil {
			sd.ConsumerID, err = checkID(fConsumerID, d.v[fConsumerID])
		}
		ev.Data = sd
	}
	if err != nil {
		ev.Data = nil
	}
	return err
}

// dataObject reads the data object at pos into d, taking the fields in
// the set fields and skipping the others.
func (s *scanner) dataObject(d *dataFields, fields int) error {
	if err := s.expect('{'); err != nil {
		return notJSON(err)
	}
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	seen := 0
	for {
		s.ws()
		name, err := s.string()
		if err != nil {
			return notJSON(err)
		}
		if err := s.expect(':'); err != nil {
			return notJSON(err)
		}
		f := dataFieldIndex(name)
		if f < 0 || fields&(1<<f) == 0 {
			if err := s.skip(2); err != nil {
				return notJSON(err)
			}
		} else {
			if seen&(1<<f) != 0 {
				return duplicate("data." + name)
			}
			seen |= 1 << f
			if err := s.dataValue(d, f); err != nil {
				return err
			}
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return notJSON(s.errorf("invalid character after object value, want ',' or '}'"))
		}
	}
}

// dataValue reads the value of data field f at pos into d.
func (s *scanner) dataValue(d *dataFields, f int) error {
	field := dataFieldNames[f] // prefixed with "data." only on error, to save an allocation per field
	c := s.peek()
	if c == 'n' {
		if err := s.literal("null"); err != nil {
			return notJSON(err)
		}
		return nil
	}
	var err *syntaxError
	switch f {
	case fHIPAA:
		switch c {
		case 't':
			d.hipaa, err = 2, s.literal("true")
		case 'f':
			d.hipaa, err = 1, s.literal("false")
		default:
			return wrongType("data."+field, kind(c), "boolean")
		}
	case fAddress:
		if c != '{' {
			return wrongType("data."+field, kind(c), "object")
		}
		a := new(Address)
		if err := s.nestedObject("data.address", addressFields[:], [6]*string{&a.Line1, &a.Line2, &a.City, &a.State, &a.ZipCode, &a.Country}); err != nil {
			return err
		}
		d.address = a
	case fPhone:
		if c != '{' {
			return wrongType("data."+field, kind(c), "object")
		}
		p := new(Phone)
		if err := s.nestedObject("data.phone", phoneFields[:], [6]*string{&p.CountryCode, &p.AreaCode, &p.Number, &p.Extension}); err != nil {
			return err
		}
		d.phone = p
	default:
		if c != '"' {
			return wrongType("data."+field, kind(c), "string")
		}
		d.v[f], err = s.string()
	}
	if err != nil {
		return notJSON(err)
	}
	return nil
}

// The names of the fields of an address and a phone, in the order of the
// destinations given to nestedObject.
var (
	addressFields = [...]string{"line1", "line2", "city", "state", "zip_code", "country"}
	phoneFields   = [...]string{"country_code", "area_code", "number", "extension"}
)

// nestedObject reads the object at pos, named field, whose members names[i]
// are strings (or null) stored in *dst[i] (len(dst) >= len(names)); other
// members are skipped.
func (s *scanner) nestedObject(field string, names []string, dst [6]*string) error {
	if err := s.expect('{'); err != nil {
		return notJSON(err)
	}
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	seen := 0
	for {
		s.ws()
		name, err := s.string()
		if err != nil {
			return notJSON(err)
		}
		if err := s.expect(':'); err != nil {
			return notJSON(err)
		}
		i := 0
		for i < len(names) && names[i] != name {
			i++
		}
		if i == len(names) {
			if err := s.skip(3); err != nil {
				return notJSON(err)
			}
		} else {
			if seen&(1<<i) != 0 {
				return duplicate(field + "." + name)
			}
			seen |= 1 << i
			switch c := s.peek(); c {
			case '"':
				if *dst[i], err = s.string(); err != nil {
					return notJSON(err)
				}
			case 'n':
				if err := s.literal("null"); err != nil {
					return notJSON(err)
				}
			default:
				return wrongType(field+"."+name, kind(c), "string")
			}
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return notJSON(s.errorf("invalid character after object value, want ',' or '}'"))
		}
	}
}

func (d *dataFields) consumer() (Consumer, error) {
	var (
		c   Consumer
		err error
	)
	if c.ConsumerID, err = checkID(fConsumerID, d.v[fConsumerID]); err != nil {
		return Consumer{}, err
	}
	if c.BusinessID, err = checkID(fBusinessID, d.v[fBusinessID]); err != nil {
		return Consumer{}, err
	}
	if err = d.checkNames(); err != nil {
		return Consumer{}, err
	}
	c.FirstName, c.MiddleName, c.LastName = d.v[fFirstName], d.v[fMiddleName], d.v[fLastName]
	return c, nil
}

func (d *dataFields) businessContact() (BusinessContact, error) {
	var (
		c   BusinessContact
		err error
	)
	if c.ContactID, err = checkID(fContactID, d.v[fContactID]); err != nil {
		return BusinessContact{}, err
	}
	if c.BusinessID, err = checkID(fBusinessID, d.v[fBusinessID]); err != nil {
		return BusinessContact{}, err
	}
	if err = d.checkNames(); err != nil {
		return BusinessContact{}, err
	}
	c.FirstName, c.MiddleName, c.LastName = d.v[fFirstName], d.v[fMiddleName], d.v[fLastName]
	return c, nil
}

func (d *dataFields) signer() (Signer, error) {
	var (
		sg  Signer
		err error
	)
	if sg.SignerID, err = checkID(fSignerID, d.v[fSignerID]); err != nil {
		return Signer{}, err
	}
	if sg.ConsumerID, err = checkID(fConsumerID, d.v[fConsumerID]); err != nil {
		return Signer{}, err
	}
	if err = d.checkNames(); err != nil {
		return Signer{}, err
	}
	sg.FirstName, sg.MiddleName, sg.LastName = d.v[fFirstName], d.v[fMiddleName], d.v[fLastName]
	if d.hipaa == 0 {
		return Signer{}, &InvalidEventError{Field: "data.hipaa_authorized", Reason: "is required"}
	}
	sg.HIPAAAuthorized = d.hipaa == 2
	sg.AccountAccess = AccountAccess(d.v[fAccountAccess])
	if err = checkEnum(fAccountAccess, d.v[fAccountAccess], sg.AccountAccess.Valid()); err != nil {
		return Signer{}, err
	}
	sg.Status = SignerStatus(d.v[fStatus])
	if err = checkEnum(fStatus, d.v[fStatus], sg.Status.Valid()); err != nil {
		return Signer{}, err
	}
	sg.Type = SignerType(d.v[fType])
	if err = checkEnum(fType, d.v[fType], sg.Type.Valid()); err != nil {
		return Signer{}, err
	}
	if a := d.address; a != nil {
		if err = a.validate(); err != nil {
			return Signer{}, err
		}
		sg.Address = a
	}
	if p := d.phone; p != nil {
		if err = p.validate(); err != nil {
			return Signer{}, err
		}
		sg.Phone = p
	}
	if v := d.v[fSSN]; v != "" {
		ssn, ok := NormalizeSSN(v)
		if !ok {
			return Signer{}, &InvalidEventError{Field: "data.social_security_number", Reason: "must be 9 digits, written 123456789 or 123-45-6789"}
		}
		sg.SSN = ssn
	}
	if v := d.v[fDateOfBirth]; v != "" {
		if reason := checkDateOfBirth(v, time.Now()); reason != "" {
			return Signer{}, &InvalidEventError{Field: "data.date_of_birth", Reason: reason}
		}
		sg.DateOfBirth = v
	}
	return sg, nil
}

func (d *dataFields) checkNames() error {
	if d.v[fFirstName] == "" {
		return &InvalidEventError{Field: "data.first_name", Reason: "is required"}
	}
	if d.v[fLastName] == "" {
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

// checkEnum checks the value v of enum field f; valid tells whether v is
// one of its values.
func checkEnum(f int, v string, valid bool) error {
	if v == "" {
		return &InvalidEventError{Field: "data." + dataFieldNames[f], Reason: "is required"}
	}
	if !valid {
		return &InvalidEventError{Field: "data." + dataFieldNames[f], Reason: "unknown value " + quote(v)}
	}
	return nil
}

// checkID returns id lower-cased if it is a canonical UUID, else an
// *InvalidEventError for id field f.
func checkID(f int, id string) (string, error) {
	if id == "" {
		return "", &InvalidEventError{Field: "data." + dataFieldNames[f], Reason: "is required"}
	}
	if !ValidUUID(id) {
		return "", &InvalidEventError{Field: "data." + dataFieldNames[f], Reason: "must be a UUID written 8-4-4-4-12 hex digits, got " + quote(id)}
	}
	return strings.ToLower(id), nil
}

// ValidUUID reports whether s is a UUID in canonical form: 36 characters,
// hex digits of any case in groups of 8-4-4-4-12 separated by '-'. Other
// forms (urn:uuid:, braces, no dashes) are not valid. The version and
// variant bits are not checked.
func ValidUUID(s string) bool {
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
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

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

// checkDateOfBirth returns "" if s is a YYYY-MM-DD calendar date not after
// today's date in UTC+14 at now, else the reason it is not.
func checkDateOfBirth(s string, now time.Time) string {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !allDigits(s[:4]) || !allDigits(s[5:7]) || !allDigits(s[8:]) {
		return "must be a date written YYYY-MM-DD"
	}
	y, _ := strconv.Atoi(s[:4])
	m, _ := strconv.Atoi(s[5:7])
	d, _ := strconv.Atoi(s[8:])
	if !calendarDate(y, m, d) {
		return "is not a calendar date"
	}
	ty, tm, td := now.In(earliestZone).Date()
	if y > ty || y == ty && (time.Month(m) > tm || time.Month(m) == tm && d > td) {
		return "is in the future"
	}
	return ""
}

// earliestZone is UTC+14 (Line Islands), the first time zone to reach a
// given date.
var earliestZone = time.FixedZone("UTC+14", 14*60*60)

// calendarDate reports whether y-m-d is a date of the proleptic Gregorian
// calendar.
func calendarDate(y, m, d int) bool {
	if m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

// num2 returns the value of the two decimal digits at s[i:i+2], or -1.
func num2(s string, i int) int {
	a, b := s[i], s[i+1]
	if a < '0' || a > '9' || b < '0' || b > '9' {
		return -1
	}
	return int(a-'0')*10 + int(b-'0')
}

// parseRFC3339 parses an RFC 3339 date-time (section 5.6):
// YYYY-MM-DDThh:mm:ss[.frac](Z|+hh:mm|-hh:mm), "T" and "Z" of either case,
// a real calendar date, hours to 23, minutes to 59, and a leap second
// (:60) only at 23:59 UTC, read as the next second. It is the grammar of the
// JSON Schema format "date-time" of the schemas; time.Parse is both more
// lenient (a comma before the fraction) and stricter (no leap second). The
// time is returned in UTC; digits of the fraction after the ninth are
// dropped.
func parseRFC3339(s string) (time.Time, bool) {
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' && s[10] != 't' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	yh, yl := num2(s, 0), num2(s, 2)
	mo, d, h, mi, sec := num2(s, 5), num2(s, 8), num2(s, 11), num2(s, 14), num2(s, 17)
	if yh < 0 || yl < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || sec < 0 {
		return time.Time{}, false
	}
	y := yh*100 + yl
	if !calendarDate(y, mo, d) || h > 23 || mi > 59 || sec > 60 {
		return time.Time{}, false
	}
	rest := s[19:]
	nanos := 0
	if rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			if i <= 9 {
				nanos = nanos*10 + int(rest[i]-'0')
			}
			i++
		}
		if i == 1 {
			return time.Time{}, false
		}
		for n := i; n <= 9; n++ {
			nanos *= 10
		}
		rest = rest[i:]
	}
	offset := 0
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, om := num2(rest, 1), num2(rest, 4)
		if oh < 0 || om < 0 || oh > 23 || om > 59 {
			return time.Time{}, false
		}
		offset = (oh*60 + om) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, false
	}
	leap := sec == 60
	if leap {
		sec = 59
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, nanos, time.UTC).Add(-time.Duration(offset) * time.Second)
	if leap {
		if t.Hour() != 23 || t.Minute() != 59 {
			return time.Time{}, false
		}
		t = t.Add(time.Second)
	}
	return t, true
}

// quote returns s quoted for an error reason, cut to 64 bytes so that a
// hostile value cannot bloat logs.
func quote(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + "..."
	}
	return strconv.Quote(s)
}
