package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
)

// ErrUnknownData is returned by NewEvent and Encode when the data is not
// one of the six data types of the v1 contract (as a value, not a pointer).
var ErrUnknownData = errors.New("events: data is not one of the six v1 data types")

// TypeOf returns the event type whose data has the Go type of data, and
// false if data is not one of Consumer, ConsumerDeleted, BusinessContact,
// BusinessContactDeleted, Signer or SignerDeleted (values, not pointers).
func TypeOf(data any) (Type, bool) {
	switch data.(type) {
	case Consumer:
		return TypeConsumerUpserted, true
	case ConsumerDeleted:
		return TypeConsumerDeleted, true
	case BusinessContact:
		return TypeBusinessContactUpserted, true
	case BusinessContactDeleted:
		return TypeBusinessContactDeleted, true
	case Signer:
		return TypeSignerUpserted, true
	case SignerDeleted:
		return TypeSignerDeleted, true
	}
	return "", false
}

// NewEvent returns an event about data (one of the six data types, value
// not pointer) with a fresh unique ID (a random UUID), Type derived from
// data's Go type, Time now (UTC), the given source and entity version. It
// does not validate (Publish does). It returns an error wrapping
// ErrUnknownData if data is not one of the six data types.
func NewEvent(source string, version uint64, data any) (Event, error) {
	t, ok := TypeOf(data)
	if !ok {
		return Event{}, fmt.Errorf("%w: got %T", ErrUnknownData, data)
	}
	return Event{
		ID:            uuid.NewString(),
		Source:        source,
		Type:          t,
		Time:          time.Now().UTC(),
		EntityVersion: version,
		Data:          data,
	}, nil
}

// wireEvent is the JSON form Encode writes.
type wireEvent struct {
	SpecVersion     string `json:"specversion"`
	ID              string `json:"id"`
	Source          string `json:"source"`
	Type            Type   `json:"type"`
	Time            string `json:"time,omitempty"`
	DataContentType string `json:"datacontenttype"`
	EntityVersion   uint64 `json:"entityversion"`
	TraceParent     string `json:"traceparent,omitempty"`
	Data            any    `json:"data"`
}

// Encode returns the CloudEvents 1.0 JSON structured-mode body of e
// (specversion "1.0", datacontenttype "application/json", entityversion as
// a JSON integer, time RFC 3339 with nanoseconds when non-zero, absent when
// zero). Optional data fields that are unknown ("" or nil) are left out.
// It does not validate (Decode the result to do so), except that it returns
// an error wrapping ErrUnknownData if e.Data is not one of the six data types
// or does not match e.Type.
func Encode(e Event) ([]byte, error) {
	t, ok := TypeOf(e.Data)
	if !ok {
		return nil, fmt.Errorf("%w: got %T", ErrUnknownData, e.Data)
	}
	if t != e.Type {
		return nil, fmt.Errorf("%w: %T is the data of %s, not of %s", ErrUnknownData, e.Data, t, e.Type)
	}
	w := wireEvent{
		SpecVersion:     SpecVersion,
		ID:              e.ID,
		Source:          e.Source,
		Type:            e.Type,
		DataContentType: ContentTypeJSON,
		EntityVersion:   e.EntityVersion,
		TraceParent:     e.TraceParent,
		Data:            e.Data,
	}
	if !e.Time.IsZero() {
		w.Time = e.Time.Format(time.RFC3339Nano)
	}
	return json.Marshal(w)
}

// EncodeBinary returns e in binary content mode (the CloudEvents NATS
// protocol binding, section 3.1): the attributes as ce- headers (string
// values percent-encoded as the binding says, entityversion in decimal,
// ce-time as Encode writes time, absent when zero; ce-datacontenttype
// "application/json") and the data object alone as the body, as Encode
// writes it. Like Encode, it does not validate.
func EncodeBinary(e Event) (nats.Header, []byte, error) {
	t, ok := TypeOf(e.Data)
	if !ok {
		return nil, nil, fmt.Errorf("%w: got %T", ErrUnknownData, e.Data)
	}
	if t != e.Type {
		return nil, nil, fmt.Errorf("%w: %T is the data of %s, not of %s", ErrUnknownData, e.Data, t, e.Type)
	}
	body, err := json.Marshal(e.Data)
	if err != nil {
		return nil, nil, err
	}
	h := nats.Header{
		HeaderSpecVersion:                {SpecVersion},
		HeaderPrefix + "id":              {percentEncode(e.ID)},
		HeaderPrefix + "source":          {percentEncode(e.Source)},
		HeaderPrefix + "type":            {string(e.Type)},
		HeaderPrefix + "datacontenttype": {ContentTypeJSON},
		HeaderPrefix + "entityversion":   {strconv.FormatUint(e.EntityVersion, 10)},
	}
	if !e.Time.IsZero() {
		h[HeaderPrefix+"time"] = []string{e.Time.Format(time.RFC3339Nano)}
	}
	if e.TraceParent != "" {
		h[HeaderPrefix+"traceparent"] = []string{percentEncode(e.TraceParent)}
	}
	return h, body, nil
}

// percentEncode encodes s as the binding asks of a header's value: space,
// double-quote, percent and every byte outside printable ASCII as %XY
// (upper-case hex), the rest as it is.
func percentEncode(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if needsPercent(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsPercent(c) {
			b = append(b, '%', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

func needsPercent(c byte) bool { return c <= ' ' || c == '"' || c == '%' || c >= 0x7f }
