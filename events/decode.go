package events

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

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
	var env envelope
	env.Data.typ = &env.Type
	if err := json.Unmarshal(body, &env, envelopeOptions...); err != nil {
		// json.Unmarshal stops at the first fault; one of the JSON text
		// further on comes first.
		var v jsontext.Value
		if err2 := json.Unmarshal(body, &v, envelopeOptions...); err2 != nil {
			err = err2
		}
		return Event{}, jsonFault(err, "")
	}
	if isNull(body) {
		return Event{}, &InvalidEventError{Reason: "body is a JSON null, not an object"}
	}
	ev, err := env.event()
	if err != nil {
		return Event{}, err
	}
	if env.Data.target != nil {
		ev.Data, err = checkData(env.Data.target, env.Data.fault)
	} else {
		ev.Data, err = decodeData(ev.Type, body[env.Data.from:env.Data.to])
	}
	if err != nil {
		return Event{}, err
	}
	if ent := ev.Entity(); !subjectMatches(subject, ent) {
		return Event{}, subjectFault(subject, ent)
	}
	return ev, nil
}

// subjectFault is the fault of an event of entity ent published on
// subject, which is not ent's.
func subjectFault(subject string, ent Entity) error {
	return &InvalidEventError{Field: "subject",
		Reason: "subject " + quote(subject) + " does not match the ids in data (want " + strconv.Quote(ent.Subject()) + ")"}
}

// isNull reports whether body, valid JSON, is a null.
func isNull(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == 'n'
}

// The options of json.Unmarshal: its defaults (names matched exactly,
// unknown names ignored, duplicate names refused) but invalid UTF-8 read as
// U+FFFD, as encoding/json and the JSON Schema validator do; and for data,
// whose names the first pass over the body has checked, no second check.
var (
	envelopeOptions = []json.Options{jsontext.AllowInvalidUTF8(true)}
	dataOptions     = []json.Options{jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)}
)

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
