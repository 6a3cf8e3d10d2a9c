package ledger

import (
	"bytes"
	"encoding/json"
	"math"
	"time"
)

// unmarshalMessage parses the JSON of a message into m: what
// json.Unmarshal does, several times faster for the messages a Ledger
// writes (what the outbox and appendRecord write: the fields in their
// order, strings of printable ASCII without escapes, numbers of digits),
// which are what readers of the stream (the accounting index, verify,
// the scans of lookupd audit) decode by the million. Anything else
// (another order, escapes, white space, a field it does not know) is
// left to json.Unmarshal, so that the result is json.Unmarshal's.
func unmarshalMessage(data []byte, m *Message) error {
	if fastMessage(data, m) {
		return nil
	}
	*m = Message{}
	return json.Unmarshal(data, m)
}

// fastMessage parses data into m if it is a message as a Ledger writes
// it, and reports whether it was.
func fastMessage(data []byte, m *Message) bool {
	d := fastDecoder{b: data}
	var v uint64
	ok := d.lit(`{"v":`) && d.uint(&v) && v <= 1<<31 && d.lit(`,"replica":`) && d.str(&m.Replica) &&
		d.lit(`,"seq":`) && d.uint(&m.Seq) && (!d.opt(`,"prev":`) || d.str(&m.Prev)) && d.lit(`,"records":[`)
	if !ok {
		return false
	}
	m.Version = int(v)
	m.Records = make([]Record, 0, bytes.Count(data, []byte(`{"time":`)))
	for i := 0; ; i++ {
		if i > 0 && !d.opt(",") {
			break
		}
		m.Records = append(m.Records, Record{})
		r := &m.Records[i]
		var prev *Record
		if i > 0 {
			prev = &m.Records[i-1]
		}
		if !d.record(r, prev) {
			return false
		}
	}
	return d.lit("]}") && len(d.b) == 0
}

// fastDecoder reads the JSON of a message as a Ledger writes it.
type fastDecoder struct{ b []byte }

// lit consumes s, which must come next.
func (d *fastDecoder) lit(s string) bool {
	if len(d.b) < len(s) || string(d.b[:len(s)]) != s {
		return false
	}
	d.b = d.b[len(s):]
	return true
}

// opt consumes s if it comes next, and reports whether it did.
func (d *fastDecoder) opt(s string) bool { return d.lit(s) }

// raw consumes a string of printable ASCII but '"' and '\' and returns
// its bytes, without the quotes.
func (d *fastDecoder) raw() ([]byte, bool) {
	if len(d.b) == 0 || d.b[0] != '"' {
		return nil, false
	}
	for i := 1; i < len(d.b); i++ {
		switch c := d.b[i]; {
		case c == '"':
			s := d.b[1:i]
			d.b = d.b[i+1:]
			return s, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// str consumes a string into *s.
func (d *fastDecoder) str(s *string) bool {
	b, ok := d.raw()
	if ok {
		*s = string(b)
	}
	return ok
}

// strLike consumes a string into *s, sharing like's bytes when it is
// the same string (a message's records repeat their replica, operation,
// caller and purpose).
func (d *fastDecoder) strLike(s *string, like string) bool {
	b, ok := d.raw()
	switch {
	case !ok:
		return false
	case string(b) == like:
		*s = like
	default:
		*s = string(b)
	}
	return true
}

// uint consumes an unsigned integer that fits in 64 bits, with no
// leading zero but for 0 itself.
func (d *fastDecoder) uint(n *uint64) bool {
	i := 0
	var v uint64
	for ; i < len(d.b) && d.b[i] >= '0' && d.b[i] <= '9'; i++ {
		c := uint64(d.b[i] - '0')
		if v > (math.MaxUint64-c)/10 {
			return false
		}
		v = v*10 + c
	}
	if i == 0 || (i > 1 && d.b[0] == '0') || (i < len(d.b) && (d.b[i] == '.' || d.b[i] == 'e' || d.b[i] == 'E')) {
		return false
	}
	*n, d.b = v, d.b[i:]
	return true
}

// record consumes a record into r, in appendRecord's order (prev: the
// message's previous record, whose strings r may share; nil for none).
func (d *fastDecoder) record(r *Record, prev *Record) bool {
	var like Record
	if prev != nil {
		like = *prev
	}
	t, ok := d.timeField()
	if !ok || !d.lit(`,"request_id":`) || !d.str(&r.RequestID) {
		return false
	}
	r.Time = t
	if d.opt(`,"sub":`) && !d.strLike(&r.Subject, like.Subject) {
		return false
	}
	if d.opt(`,"client":`) && !d.strLike(&r.Client, like.Client) {
		return false
	}
	if d.opt(`,"tenants":[`) && !d.tenants(r) {
		return false
	}
	if !d.lit(`,"operation":`) || !d.strLike(&r.Operation, like.Operation) || !d.lit(`,"person_id":`) || !d.str(&r.PersonID) {
		return false
	}
	if d.opt(`,"ssn_mode":`) && !d.strLike(&r.SSNMode, like.SSNMode) {
		return false
	}
	r.DOBDisclosed = d.opt(`,"dob_disclosed":true`)
	if d.opt(`,"purpose":`) && !d.strLike(&r.Purpose, like.Purpose) {
		return false
	}
	if d.opt(`,"requested":`) && !d.str(&r.Requested) {
		return false
	}
	var persons uint64
	if !d.lit(`,"persons":`) || !d.uint(&persons) || persons > 1<<31 || !d.lit(`,"replica":`) ||
		!d.strLike(&r.Replica, like.Replica) || !d.lit(`,"read_model_sequence":`) || !d.uint(&r.ReadModelSeq) {
		return false
	}
	r.Persons = int(persons)
	// Within a message a record does not say where it is stored: a
	// record with chain, seq, index or prev is left to json.Unmarshal.
	return d.lit("}")
}

// timeField consumes `{"time":"<RFC 3339>"` and returns the time, as
// time.Time's UnmarshalJSON reads it.
func (d *fastDecoder) timeField() (time.Time, bool) {
	var t time.Time
	if !d.lit(`{"time":`) || len(d.b) == 0 || d.b[0] != '"' {
		return t, false
	}
	end := bytes.IndexByte(d.b[1:], '"')
	if end < 0 {
		return t, false
	}
	if err := t.UnmarshalJSON(d.b[:end+2]); err != nil {
		return t, false
	}
	d.b = d.b[end+2:]
	return t, true
}

// tenants consumes the tenants after `"tenants":[`, and the `]`.
func (d *fastDecoder) tenants(r *Record) bool {
	for i := 0; ; i++ {
		if i > 0 && !d.opt(",") {
			break
		}
		var s string
		if !d.str(&s) {
			return false
		}
		r.Tenants = append(r.Tenants, s)
	}
	return d.lit("]") && len(r.Tenants) > 0
}
