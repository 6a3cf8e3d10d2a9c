package accounting

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/lookup/persons/internal/ledger"
)

// A record's value in the index is what its key does not hold (the key
// holds the person, the time, the stream sequence and the place in the
// message), in a compact binary form: about a third of the record's JSON,
// and the index's bytes are most of what building and reading it costs.
//
//	byte     valueFormat
//	uvarint  flags: flagDOB (dob_disclosed), flagTime (the time follows,
//	         as time.MarshalBinary writes it: a time the key's Unix
//	         nanoseconds in UTC do not give back exactly), flagRequested
//	         (the request date follows)
//	strings  [time,] [requested,] request_id, sub, client, operation, ssn_mode,
//	         purpose, replica, chain, prev: each a uvarint length and
//	         the bytes
//	uvarint  the number of tenants, then each tenant as a string
//	uvarints persons, read_model_sequence, seq, index
const valueFormat = 1

// The flags of a value.
const (
	flagDOB       = 1
	flagTime      = 2
	flagRequested = 4
)

// errValue is returned for a value that is not of valueFormat.
var errValue = errors.New("accounting index: not a record value of this format")

// appendValue appends the value of r to dst.
func appendValue(dst []byte, r *ledger.Record) []byte {
	var flags uint64
	if r.DOBDisclosed {
		flags |= flagDOB
	}
	exact := r.Time.Location() == time.UTC && r.Time.UnixNano() >= 0 && time.Unix(0, r.Time.UnixNano()).UTC().Equal(r.Time)
	if !exact {
		flags |= flagTime
	}
	if r.Requested != "" {
		flags |= flagRequested
	}
	dst = binary.AppendUvarint(append(dst, valueFormat), flags)
	if !exact {
		b, _ := r.Time.MarshalBinary() // fails only for a time zone offset not in whole minutes, which JSON cannot hold
		dst = appendString(dst, string(b))
	}
	if r.Requested != "" {
		dst = appendString(dst, r.Requested)
	}
	for _, s := range [...]string{r.RequestID, r.Subject, r.Client, r.Operation, r.SSNMode, r.Purpose, r.Replica, r.Chain, r.Prev} {
		dst = appendString(dst, s)
	}
	dst = binary.AppendUvarint(dst, uint64(len(r.Tenants)))
	for _, t := range r.Tenants {
		dst = appendString(dst, t)
	}
	dst = binary.AppendUvarint(dst, uint64(max(r.Persons, 0))) //nolint:gosec // G115: not negative
	dst = binary.AppendUvarint(dst, r.ReadModelSeq)
	dst = binary.AppendUvarint(dst, r.Seq)
	return binary.AppendUvarint(dst, uint64(max(r.Index, 0))) //nolint:gosec // G115: not negative
}

// appendString appends s as a uvarint length and its bytes.
func appendString(dst []byte, s string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

// decodeValue returns the record of person at the key's time (Unix
// nanoseconds) whose value is v.
func decodeValue(v []byte, person string, at uint64) (ledger.Record, error) {
	d := valueReader{b: v}
	r := ledger.Record{PersonID: person}
	if len(v) == 0 || v[0] != valueFormat {
		return r, errValue
	}
	d.b = d.b[1:]
	flags := d.uvarint()
	r.Time = time.Unix(0, int64(at)).UTC() //nolint:gosec // G115: a key's time is a non-negative int64
	if flags&flagTime != 0 {
		if err := r.Time.UnmarshalBinary([]byte(d.string())); err != nil {
			return r, errValue
		}
	}
	if flags&flagRequested != 0 {
		r.Requested = d.string()
	}
	r.DOBDisclosed = flags&flagDOB != 0
	for _, s := range [...]*string{&r.RequestID, &r.Subject, &r.Client, &r.Operation, &r.SSNMode, &r.Purpose, &r.Replica, &r.Chain, &r.Prev} {
		*s = d.string()
	}
	if n := d.uvarint(); n > 0 && n <= uint64(len(d.b)) {
		r.Tenants = make([]string, n)
		for i := range r.Tenants {
			r.Tenants[i] = d.string()
		}
	}
	r.Persons, r.ReadModelSeq = int(d.uvarint()), d.uvarint() //nolint:gosec // G115: a count of persons
	r.Seq, r.Index = d.uvarint(), int(d.uvarint())            //nolint:gosec // G115: a place in a message
	if d.bad || len(d.b) != 0 {
		return r, errValue
	}
	return r, nil
}

// valueReader reads a value; bad is set once it reads past the end.
type valueReader struct {
	b   []byte
	bad bool
}

func (d *valueReader) uvarint() uint64 {
	n, size := binary.Uvarint(d.b)
	if size <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[size:]
	return n
}

func (d *valueReader) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
