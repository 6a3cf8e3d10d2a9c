package events

import (
	"encoding/json"
	"errors"
	"math/big"
	"net/url"
	"reflect"
	"strconv"
	"strings"
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

// envelope is the wire form of the CloudEvents 1.0 structured-mode JSON
// envelope. Required string attributes are plain strings (absent, null and ""
// all read as missing); optional ones are pointers so that "" can be told
// apart from absent.
type envelope struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Time            *string         `json:"time"`
	DataContentType *string         `json:"datacontenttype"`
	EntityVersion   json.RawMessage `json:"entityversion"`
	Data            json.RawMessage `json:"data"`
}

// signerWire is the wire form of Signer data: hipaa_authorized is a pointer
// so that a missing value can be told apart from false.
type signerWire struct {
	SignerID        string   `json:"signer_id"`
	ConsumerID      string   `json:"consumer_id"`
	FirstName       string   `json:"first_name"`
	MiddleName      string   `json:"middle_name"`
	LastName        string   `json:"last_name"`
	HIPAAAuthorized *bool    `json:"hipaa_authorized"`
	AccountAccess   string   `json:"account_access"`
	Status          string   `json:"status"`
	Type            string   `json:"type"`
	Address         *Address `json:"address"`
	Phone           *Phone   `json:"phone"`
	SSN             string   `json:"social_security_number"`
	DateOfBirth     string   `json:"date_of_birth"`
}

// Decode decodes and validates one message of the stream: subject is the NATS
// subject it was published on, body the CloudEvents 1.0 JSON (structured
// mode). It returns an *InvalidEventError naming the field and reason for
// anything that breaks the v1 contract (PRODUCT.md section 2). Ids in the
// returned Event are lower-case; Signer.SSN is 9 digits.
//
// Rules, where PRODUCT.md is silent:
//
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
//     (Event.Subject), compared case-insensitively.
//
// Attribute and field names are matched as encoding/json matches them:
// exactly when possible, else case-insensitively, and of duplicate keys the
// last wins. CloudEvents attribute names are lower-case by definition, so a
// key such as "Type" is lenience that a conforming producer never relies
// on; the JSON Schemas in schema/ are strict about names.
//
// Field in the error is "" when the body is not a JSON object, the
// attribute name for envelope faults, "data.<name>" (or
// "data.address.<name>", "data.phone.<name>") for data faults and "subject"
// when the subject disagrees with the data.
func Decode(subject string, body []byte) (Event, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return Event{}, jsonError("", err)
	}
	var ev Event
	if err := env.validate(&ev); err != nil {
		return Event{}, err
	}
	if err := decodeData(&ev, env.Data); err != nil {
		return Event{}, err
	}
	if want := ev.Subject(); !strings.EqualFold(subject, want) {
		return Event{}, &InvalidEventError{Field: "subject",
			Reason: "subject " + strconv.Quote(subject) + " does not match the ids in data (want " + strconv.Quote(want) + ")"}
	}
	return ev, nil
}

// jsonError turns an error of encoding/json into an *InvalidEventError whose
// Field is prefix joined with the JSON path of the fault.
func jsonError(prefix string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if prefix != "" {
			if field == "" {
				field = prefix
			} else {
				field = prefix + "." + field
			}
		}
		if field == "" {
			return &InvalidEventError{Reason: "body is a JSON " + te.Value + ", not an object"}
		}
		return &InvalidEventError{Field: field, Reason: "wrong JSON type: got " + te.Value + ", want " + jsonKind(te.Type)}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &InvalidEventError{Field: prefix, Reason: "body is not JSON: " + se.Error()}
	}
	return &InvalidEventError{Field: prefix, Reason: err.Error()}
}

// jsonKind names the JSON type that values of Go type t are decoded from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	}
	return t.String()
}

// validate checks the envelope attributes and fills in ev from them.
func (env *envelope) validate(ev *Event) error {
	switch env.SpecVersion {
	case SpecVersion:
	case "":
		return &InvalidEventError{Field: "specversion", Reason: "is required"}
	default:
		return &InvalidEventError{Field: "specversion", Reason: "must be \"1.0\", got " + strconv.Quote(env.SpecVersion)}
	}
	if env.ID == "" {
		return &InvalidEventError{Field: "id", Reason: "is required"}
	}
	ev.ID = env.ID
	if env.Source == "" {
		return &InvalidEventError{Field: "source", Reason: "is required"}
	}
	if !sourceOK(env.Source) {
		return &InvalidEventError{Field: "source", Reason: "is not a URI-reference"}
	}
	ev.Source = env.Source
	if env.Type == "" {
		return &InvalidEventError{Field: "type", Reason: "is required"}
	}
	t, ok := knownType(env.Type)
	if !ok {
		return &InvalidEventError{Field: "type", Reason: "unknown event type " + strconv.Quote(env.Type)}
	}
	ev.Type = t
	if env.Time != nil {
		tm, ok := parseRFC3339(*env.Time)
		if !ok {
			return &InvalidEventError{Field: "time", Reason: "is not an RFC 3339 date-time"}
		}
		ev.Time = tm
	}
	if env.DataContentType != nil && !contentTypeOK(*env.DataContentType) {
		return &InvalidEventError{Field: "datacontenttype", Reason: "must be \"application/json\", got " + strconv.Quote(*env.DataContentType)}
	}
	v, err := parseEntityVersion(env.EntityVersion)
	if err != nil {
		return err
	}
	ev.EntityVersion = v
	return nil
}

// sourceOK reports whether s is a URI-reference: url.Parse accepts it and
// it holds no backslash (as the JSON Schema format "uri-reference" of the
// schemas). Strings made only of characters that RFC 3986 allows unescaped,
// without "%" and without an authority, are accepted without calling
// url.Parse (which allocates).
func sourceOK(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			return false
		}
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		switch c {
		case '-', '.', '_', '~', ':', '/', '?', '#', '@', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=':
			continue
		}
		_, err := url.Parse(s)
		return err == nil
	}
	// Only unreserved and reserved characters: url.Parse can still refuse a
	// few of these (for example a port that is not a number), so ask it
	// when the string has an authority.
	if strings.Contains(s, "//") {
		_, err := url.Parse(s)
		return err == nil
	}
	return true
}

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

// parseEntityVersion parses the entityversion attribute: a JSON number that
// is an integer in [1, 2^64-1].
func parseEntityVersion(raw json.RawMessage) (uint64, error) {
	const field = "entityversion"
	if len(raw) == 0 || string(raw) == "null" {
		return 0, &InvalidEventError{Field: field, Reason: "is required"}
	}
	c := raw[0]
	if c != '-' && (c < '0' || c > '9') {
		return 0, &InvalidEventError{Field: field, Reason: "must be a JSON integer, got " + jsonValueKind(c)}
	}
	digits := true
	for _, b := range raw {
		if b < '0' || b > '9' {
			digits = false
			break
		}
	}
	var v uint64
	if digits {
		var err error
		v, err = strconv.ParseUint(string(raw), 10, 64)
		if err != nil {
			return 0, &InvalidEventError{Field: field, Reason: "is out of range (max 18446744073709551615)"}
		}
	} else {
		// A fraction or exponent: accept mathematical integers (1.0, 1e3)
		// as JSON Schema does.
		f, _, err := big.ParseFloat(string(raw), 10, 256, big.ToNearestEven)
		if err != nil {
			return 0, &InvalidEventError{Field: field, Reason: "is not a number"}
		}
		if !f.IsInt() {
			return 0, &InvalidEventError{Field: field, Reason: "must be an integer, got " + string(raw)}
		}
		if f.Sign() < 0 {
			return 0, &InvalidEventError{Field: field, Reason: "must be at least 1, got " + string(raw)}
		}
		u, acc := f.Uint64()
		if acc != big.Exact {
			return 0, &InvalidEventError{Field: field, Reason: "is out of range (max 18446744073709551615)"}
		}
		v = u
	}
	if v == 0 {
		return 0, &InvalidEventError{Field: field, Reason: "must be at least 1, got 0"}
	}
	return v, nil
}

// jsonValueKind names the kind of JSON value that starts with byte c.
func jsonValueKind(c byte) string {
	switch c {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	}
	return "a non-number"
}

// decodeData decodes and validates the data of ev (whose Type is set) from
// raw, and sets ev.Data.
func decodeData(ev *Event, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return &InvalidEventError{Field: "data", Reason: "is required"}
	}
	if raw[0] != '{' {
		return &InvalidEventError{Field: "data", Reason: "must be a JSON object, got " + jsonValueKind(raw[0])}
	}
	var err error
	switch ev.Type {
	case TypeConsumerUpserted:
		var d Consumer
		if err = unmarshalData(raw, &d); err == nil {
			err = d.validate()
		}
		ev.Data = d
	case TypeConsumerDeleted:
		var d ConsumerDeleted
		if err = unmarshalData(raw, &d); err == nil {
			d.ConsumerID, err = checkID("data.consumer_id", d.ConsumerID)
		}
		ev.Data = d
	case TypeBusinessContactUpserted:
		var d BusinessContact
		if err = unmarshalData(raw, &d); err == nil {
			err = d.validate()
		}
		ev.Data = d
	case TypeBusinessContactDeleted:
		var d BusinessContactDeleted
		if err = unmarshalData(raw, &d); err == nil {
			d.ContactID, err = checkID("data.contact_id", d.ContactID)
		}
		ev.Data = d
	case TypeSignerUpserted:
		var w signerWire
		if err = unmarshalData(raw, &w); err == nil {
			var d Signer
			d, err = w.signer()
			ev.Data = d
		}
	case TypeSignerDeleted:
		var d SignerDeleted
		if err = unmarshalData(raw, &d); err == nil {
			err = d.validate()
		}
		ev.Data = d
	}
	return err
}

func unmarshalData(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonError("data", err)
	}
	return nil
}

func (d *Consumer) validate() error {
	var err error
	if d.ConsumerID, err = checkID("data.consumer_id", d.ConsumerID); err != nil {
		return err
	}
	if d.BusinessID, err = checkID("data.business_id", d.BusinessID); err != nil {
		return err
	}
	return checkNames(d.FirstName, d.LastName)
}

func (d *BusinessContact) validate() error {
	var err error
	if d.ContactID, err = checkID("data.contact_id", d.ContactID); err != nil {
		return err
	}
	if d.BusinessID, err = checkID("data.business_id", d.BusinessID); err != nil {
		return err
	}
	return checkNames(d.FirstName, d.LastName)
}

func (d *SignerDeleted) validate() error {
	var err error
	if d.SignerID, err = checkID("data.signer_id", d.SignerID); err != nil {
		return err
	}
	d.ConsumerID, err = checkID("data.consumer_id", d.ConsumerID)
	return err
}

// signer validates w and returns it as a Signer.
func (w *signerWire) signer() (Signer, error) {
	var (
		d   Signer
		err error
	)
	if d.SignerID, err = checkID("data.signer_id", w.SignerID); err != nil {
		return Signer{}, err
	}
	if d.ConsumerID, err = checkID("data.consumer_id", w.ConsumerID); err != nil {
		return Signer{}, err
	}
	if err = checkNames(w.FirstName, w.LastName); err != nil {
		return Signer{}, err
	}
	d.FirstName, d.MiddleName, d.LastName = w.FirstName, w.MiddleName, w.LastName
	if w.HIPAAAuthorized == nil {
		return Signer{}, &InvalidEventError{Field: "data.hipaa_authorized", Reason: "is required"}
	}
	d.HIPAAAuthorized = *w.HIPAAAuthorized
	d.AccountAccess = AccountAccess(w.AccountAccess)
	if err = checkEnum("data.account_access", w.AccountAccess, d.AccountAccess.Valid()); err != nil {
		return Signer{}, err
	}
	d.Status = SignerStatus(w.Status)
	if err = checkEnum("data.status", w.Status, d.Status.Valid()); err != nil {
		return Signer{}, err
	}
	d.Type = SignerType(w.Type)
	if err = checkEnum("data.type", w.Type, d.Type.Valid()); err != nil {
		return Signer{}, err
	}
	if a := w.Address; a != nil {
		if err = a.validate(); err != nil {
			return Signer{}, err
		}
		d.Address = a
	}
	if p := w.Phone; p != nil {
		if err = p.validate(); err != nil {
			return Signer{}, err
		}
		d.Phone = p
	}
	if w.SSN != "" {
		ssn, ok := NormalizeSSN(w.SSN)
		if !ok {
			return Signer{}, &InvalidEventError{Field: "data.social_security_number", Reason: "must be 9 digits, written 123456789 or 123-45-6789"}
		}
		d.SSN = ssn
	}
	if w.DateOfBirth != "" {
		if reason := checkDateOfBirth(w.DateOfBirth, time.Now()); reason != "" {
			return Signer{}, &InvalidEventError{Field: "data.date_of_birth", Reason: reason}
		}
		d.DateOfBirth = w.DateOfBirth
	}
	return d, nil
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

func checkNames(first, last string) error {
	if first == "" {
		return &InvalidEventError{Field: "data.first_name", Reason: "is required"}
	}
	if last == "" {
		return &InvalidEventError{Field: "data.last_name", Reason: "is required"}
	}
	return nil
}

func checkEnum(field, v string, valid bool) error {
	if v == "" {
		return &InvalidEventError{Field: field, Reason: "is required"}
	}
	if !valid {
		return &InvalidEventError{Field: field, Reason: "unknown value " + strconv.Quote(v)}
	}
	return nil
}

// checkID returns id lower-cased if it is a canonical UUID, else an
// *InvalidEventError for field.
func checkID(field, id string) (string, error) {
	if id == "" {
		return "", &InvalidEventError{Field: field, Reason: "is required"}
	}
	if !ValidUUID(id) {
		return "", &InvalidEventError{Field: field, Reason: "must be a UUID written 8-4-4-4-12 hex digits, got " + strconv.Quote(id)}
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
