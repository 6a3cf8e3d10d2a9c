package ledger

import (
	"bytes"
	"math"
	"time"
)

// unmarshalMessage parses the JSON of a message (of format 2 or 3) into
// m: what jsonMessage does, several times faster for the messages a
// Ledger writes (what the outbox writes, and what it wrote of format 2:
// the fields in their order, strings of printable ASCII without escapes,
// numbers of digits), which are what readers of the stream (the
// accounting index, verify, the scans of lookupd audit) decode by the
// million. Anything else (another order, escapes, white space, a field it
// does not know) is left to jsonMessage, so that the result is its.
func unmarshalMessage(data []byte, m *Message) error {
	if fastMessage(data, m) {
		return nil
	}
	*m = Message{}
	return jsonMessage(data, m)
}

// fastMessage parses data into m if it is a message as a Ledger writes
// it (or wrote it, in format 2), and reports whether it was.
func fastMessage(data []byte, m *Message) bool {
	d := fastDecoder{b: data}
	var v uint64
	ok := d.lit(`{"v":`) && d.uint(&v) && v <= 1<<31 && d.lit(`,"replica":`) && d.str(&m.Replica) &&
		d.lit(`,"seq":`) && d.uint(&m.Seq) && (!d.opt(`,"prev":`) || d.str(&m.Prev)) && d.lit(`,"records":[`)
	if !ok {
		return false
	}
	m.Version = int(v)
	if m.Version == FormatVersion {
		m.Records = make([]Record, 0, bytes.Count(data, []byte(`{"person_id":`)))
	} else {
		m.Records = make([]Record, 0, bytes.Count(data, []byte(`{"time":`)))
	}
	for i := 0; ; i++ {
		if i > 0 && !d.opt(",") {
			break
		}
		var like *Record
		if n := len(m.Records); n > 0 {
			like = &m.Records[n-1]
		}
		if m.Version == FormatVersion {
			if !d.answer(&m.Records, like) {
				return false
			}
			continue
		}
		m.Records = append(m.Records, Record{})
		if !d.record(&m.Records[len(m.Records)-1], like, false) || !d.lit("}") {
			return false
		}
	}
	return d.lit("]}") && len(d.b) == 0
}

// answer consumes a format 3 record and appends a record to *recs for
// each person it lists (like: the message's previous record, whose
// strings they may share; nil for none).
func (d *fastDecoder) answer(recs *[]Record, like *Record) bool {
	if like == nil {
		like = &Record{}
	}
	var base Record
	if !d.record(&base, like, true) || !d.lit(`,"disclosed":[`) {
		return false
	}
	ssn := like.SSNMode // the last SSN mode read, whose bytes the next may share
	for i := 0; ; i++ {
		if i > 0 && !d.opt(",") {
			break
		}
		r := base
		if !d.lit(`{"person_id":`) || !d.str(&r.PersonID) {
			return false
		}
		if d.opt(`,"ssn_mode":`) {
			if !d.strLike(&r.SSNMode, ssn) {
				return false
			}
			ssn = r.SSNMode
		}
		r.DOBDisclosed = d.opt(`,"dob_disclosed":true`)
		if !d.lit("}") {
			return false
		}
		*recs = append(*recs, r)
	}
	return d.lit("]}")
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

// record consumes a record into r, in the writer's order, up to its
// closing brace: a format 2 record, or with answer the fields of a format
// 3 record before its persons (like: the message's previous record, whose
// strings r may share; nil for none).
func (d *fastDecoder) record(r *Record, like *Record, answer bool) bool {
	if like == nil {
		like = &Record{}
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
	if !d.lit(`,"operation":`) || !d.strLike(&r.Operation, like.Operation) || (!answer && !d.person(r, like)) {
		return false
	}
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
	return true
}

// person consumes the person fields of a format 2 record into r.
func (d *fastDecoder) person(r, like *Record) bool {
	if !d.lit(`,"person_id":`) || !d.str(&r.PersonID) {
		return false
	}
	if d.opt(`,"ssn_mode":`) && !d.strLike(&r.SSNMode, like.SSNMode) {
		return false
	}
	r.DOBDisclosed = d.opt(`,"dob_disclosed":true`)
	return true
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
