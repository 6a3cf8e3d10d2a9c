package events

import (
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

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
	// TraceParent is the distributed tracing extension, kept when it is a
	// string (an extension of another JSON type is ignored, as any).
	TraceParent jsontext.Value `json:"traceparent"`
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

// dataSpan is the data attribute. When the type attribute comes before it
// in the body and names one of Types, data is read as it is met, in the
// same pass (target holds it, fault the first value of a wrong JSON type in
// it, to be reported after the attributes' faults); otherwise it is
// checked with the body's syntax and its place kept, from and to, to be
// read once the type is known. to is 0 when data is absent or null.
type dataSpan struct {
	from, to int
	typ      *string // the type attribute as read so far
	target   fielder // non-nil: data was read into it
	fault    error
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (s *dataSpan) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == '{' && s.typ != nil {
		if t, ok := knownType(*s.typ); ok {
			s.target = dataTarget(t)
			if err := readObject(dec, "data.", s.target, &s.fault); err != nil {
				return err
			}
			s.to = int(dec.InputOffset())
			return nil
		}
	}
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
	return Event{ID: env.ID, Source: env.Source, Type: t, Time: tm.UTC(), EntityVersion: env.EntityVersion.v,
		TraceParent: traceParent(env.TraceParent)}, nil
}

// traceParent returns the string value of the traceparent extension, ""
// when it is absent or not a JSON string.
func traceParent(v jsontext.Value) string {
	if v.Kind() != '"' {
		return ""
	}
	s, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return ""
	}
	return string(s)
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
