package events

import (
	"errors"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go"
)

// Binary content mode, as the CloudEvents NATS protocol binding defines it
// (section 3.1) and the official SDKs publish by default: the attributes
// travel as NATS headers named "ce-" and the attribute's name, the
// datacontenttype also (or instead) as Content-Type, and the body is the
// data alone.
const (
	// HeaderPrefix starts the name of every attribute's header.
	HeaderPrefix = "ce-"
	// HeaderSpecVersion marks a message in binary content mode.
	HeaderSpecVersion = HeaderPrefix + "specversion"
	// HeaderContentType carries the datacontenttype in binary mode, and
	// names structured mode when it is application/cloudevents.
	HeaderContentType = "Content-Type"
)

// contentTypeStructured is the media type of a structured-mode message.
const contentTypeStructured = "application/cloudevents"

// IsBinary reports whether a message with headers h is in binary content
// mode: it carries ce-specversion (header names are matched
// case-insensitively, as NATS defines them) and its Content-Type is not
// application/cloudevents, which names structured mode.
func IsBinary(h nats.Header) bool {
	if len(h) == 0 {
		return false
	}
	binary := false
	for k, vs := range h {
		switch {
		case strings.EqualFold(k, HeaderSpecVersion):
			binary = true
		case strings.EqualFold(k, HeaderContentType) && len(vs) > 0 &&
			len(vs[0]) >= len(contentTypeStructured) && strings.EqualFold(vs[0][:len(contentTypeStructured)], contentTypeStructured):
			return false
		}
	}
	return binary
}

// DecodeMsg decodes and validates one message of the stream in either
// content mode: binary when its headers say so (IsBinary), else
// structured (Decode). Every rule of Decode holds in both modes; in binary
// mode an attribute's fault names its header (Field "ce-entityversion",
// "Content-Type"), and the body is the data object, its faults named as
// in structured mode ("data.first_name").
//
// Header values are read as the binding says: a double-quoted value is
// unquoted, then one round of percent-decoding is applied (upper or lower
// case hex; a value that is not valid UTF-8 once decoded is refused). An
// attribute's header given twice, under one name or two that differ in
// case, is refused. The entityversion header must hold the integer the
// JSON form would: a JSON number that is an integer from 1 to 2^64-1.
// Headers of other extensions are ignored, as extensions are in
// structured mode.
func DecodeMsg(subject string, h nats.Header, body []byte) (Event, error) {
	if !IsBinary(h) {
		return Decode(subject, body)
	}
	return decodeBinary(subject, h, body)
}

// binaryAttrs are the attributes of the v1 contract read from headers,
// in the order their faults are reported (Decode's).
var binaryAttrs = [...]string{"specversion", "id", "source", "type", "time", "datacontenttype", "entityversion", "traceparent"}

// attrIndex returns the index in binaryAttrs of the attribute whose header
// is name ("ce-" and the attribute, any case), or -1.
func attrIndex(name string) int {
	if len(name) <= len(HeaderPrefix) || !strings.EqualFold(name[:len(HeaderPrefix)], HeaderPrefix) {
		return -1
	}
	attr := name[len(HeaderPrefix):]
	for i, a := range binaryAttrs {
		if strings.EqualFold(attr, a) {
			return i
		}
	}
	return -1
}

// headerAttr is one attribute as read from its header.
type headerAttr struct {
	header string // the header's name as sent; "" when absent
	value  string // decoded
	err    *InvalidEventError
}

// readHeaders reads the attributes of h; the datacontenttype from
// ce-datacontenttype, else from Content-Type (both given must agree).
func readHeaders(h nats.Header) (attrs [len(binaryAttrs)]headerAttr) {
	const ct = 5 // datacontenttype's index
	var contentType headerAttr
	for k, vs := range h {
		i := attrIndex(k)
		at := &contentType
		switch {
		case i >= 0:
			at = &attrs[i]
		case !strings.EqualFold(k, HeaderContentType):
			continue
		}
		if at.header != "" || len(vs) > 1 {
			at.header = k
			at.err = &InvalidEventError{Field: k, Reason: "header appears more than once"}
			continue
		}
		at.header = k
		if len(vs) == 1 {
			v, err := headerValue(vs[0])
			if err != nil {
				at.err = &InvalidEventError{Field: k, Reason: err.Error()}
			}
			at.value = v
		}
	}
	switch {
	case attrs[ct].header == "":
		attrs[ct] = contentType
	case contentType.header != "" && contentType.err == nil && attrs[ct].err == nil && contentType.value != attrs[ct].value:
		attrs[ct].err = &InvalidEventError{Field: contentType.header,
			Reason: "differs from " + attrs[ct].header + " " + quote(attrs[ct].value)}
	}
	return attrs
}

// headerValue decodes a header's value as the binding says: unquoted when
// double-quoted (RFC 9110 quoted-string, backslash escapes), then
// percent-decoded once, to valid UTF-8.
func headerValue(raw string) (string, error) {
	v := raw
	if strings.HasPrefix(v, `"`) {
		var b strings.Builder
		i := 1
		for ; i < len(v) && v[i] != '"'; i++ {
			if v[i] == '\\' {
				i++
				if i == len(v) {
					break
				}
			}
			b.WriteByte(v[i])
		}
		if i != len(v)-1 {
			return "", errBadQuoting
		}
		v = b.String()
	}
	if strings.IndexByte(v, '%') < 0 {
		return v, nil
	}
	d, err := url.PathUnescape(v)
	if err != nil {
		return "", errBadPercent
	}
	if !utf8.ValidString(d) {
		return "", errBadUTF8
	}
	return d, nil
}

var (
	errBadQuoting = &InvalidEventError{Reason: "is not a valid double-quoted string"}
	errBadPercent = &InvalidEventError{Reason: "holds a % that is not followed by two hex digits"}
	errBadUTF8    = &InvalidEventError{Reason: "is not UTF-8 once percent-decoded"}
)

// decodeBinary decodes a binary-mode message: the attributes from h, the
// data from body.
func decodeBinary(subject string, h nats.Header, body []byte) (Event, error) {
	attrs := readHeaders(h)
	for _, a := range attrs {
		if a.err != nil {
			if a.err.Field == "" {
				return Event{}, &InvalidEventError{Field: a.header, Reason: a.err.Reason}
			}
			return Event{}, a.err
		}
	}
	env := envelope{SpecVersion: attrs[0].value, ID: attrs[1].value, Source: attrs[2].value, Type: attrs[3].value}
	if attrs[4].header != "" {
		env.Time = &attrs[4].value
	}
	if attrs[5].header != "" {
		env.DataContentType = &attrs[5].value
	}
	if ev := attrs[6]; ev.header != "" {
		env.EntityVersion.set = true
		if numberText(ev.value) {
			env.EntityVersion.v, env.EntityVersion.err = parseEntityVersion([]byte(ev.value))
		} else {
			env.EntityVersion.err = &InvalidEventError{Field: "entityversion", Reason: "must be an integer, got " + quote(ev.value)}
		}
	}
	env.Data.to = len(body) // data is required: an empty body has none
	ev, err := env.event()
	if err != nil {
		var ie *InvalidEventError
		if errors.As(err, &ie) {
			return Event{}, nameHeader(ie, attrs)
		}
		return Event{}, err
	}
	ev.TraceParent = attrs[7].value
	if ev.Data, err = decodeBinaryData(ev.Type, body); err != nil {
		return Event{}, err
	}
	if !subjectMatches(subject, ev.Entity()) {
		return Event{}, subjectFault(subject, ev.Entity())
	}
	return ev, nil
}

// nameHeader returns ie, a fault of an attribute, naming the header it
// came from (or would have: "ce-" and the attribute when it is missing).
func nameHeader(ie *InvalidEventError, attrs [len(binaryAttrs)]headerAttr) *InvalidEventError {
	for i, a := range binaryAttrs {
		if ie.Field == a {
			name := attrs[i].header
			if name == "" {
				name = HeaderPrefix + a
			}
			return &InvalidEventError{Field: name, Reason: ie.Reason}
		}
	}
	return ie
}

// numberText reports whether s is a JSON number's text, so that
// parseEntityVersion's account of it applies.
func numberText(s string) bool {
	v := jsontext.Value(s)
	return v.IsValid() && v.Kind() == '0'
}

// decodeBinaryData reads body, the data object of an event of type t in
// binary mode, as Decode reads the data attribute: one JSON object, no
// name twice at any depth, nothing after it.
func decodeBinaryData(t Type, body []byte) (any, error) {
	r := dataReaders.Get().(*dataReader)
	defer func() {
		r.buf.Reset()
		r.dec.Reset(&r.buf) // drop body
		dataReaders.Put(r)
	}()
	r.buf.Reset()
	r.buf.Write(body)
	r.dec.Reset(&r.buf, envelopeOptions...)
	switch k := r.dec.PeekKind(); k {
	case '{':
	case 0: // not JSON: the syntax error, below
		_, err := r.dec.ReadValue()
		return nil, jsonFault(err, "")
	default:
		return nil, &InvalidEventError{Field: "data", Reason: "must be a JSON object, got " + aKind(k)}
	}
	target := dataTarget(t)
	var fault error
	if err := readObject(&r.dec, "data.", target, &fault); err != nil {
		return nil, jsonFault(err, "data.")
	}
	if _, err := r.dec.ReadToken(); !errors.Is(err, io.EOF) {
		if err == nil {
			return nil, &InvalidEventError{Reason: "body is not JSON: a value follows the data object"}
		}
		return nil, jsonFault(err, "")
	}
	return checkData(target, fault)
}
