package projector

import (
	"encoding/binary"
	"errors"

	"github.com/lookup/persons/events"
)

// formatV1 is the first byte of every entity value (see Values in the
// package documentation).
const formatV1 = 1

const flagDeleted = 1

const (
	sflagHIPAA = 1 << iota
	sflagAddress
	sflagPhone
)

var errCorrupt = errors.New("corrupt value")

type header struct {
	version uint64
	deleted bool
}

func appendHeader(b []byte, version uint64, deleted bool) []byte {
	var flags byte
	if deleted {
		flags |= flagDeleted
	}
	b = append(b, formatV1, flags)
	return binary.AppendUvarint(b, version)
}

func decodeHeader(v []byte) (header, []byte, error) {
	if len(v) < 3 || v[0] != formatV1 {
		return header{}, nil, errCorrupt
	}
	ver, n := binary.Uvarint(v[2:])
	if n <= 0 {
		return header{}, nil, errCorrupt
	}
	return header{version: ver, deleted: v[1]&flagDeleted != 0}, v[2+n:], nil
}

// appendStrings appends each of ss, length-prefixed (read back by
// reader.nextString), in order.
func appendStrings(b []byte, ss ...string) []byte {
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// reader decodes the fields of a value; the first error sticks. Its
// strings are slices of one copy of the value, made by newReader: one
// allocation for all the fields of a value rather than one each.
type reader struct {
	b   []byte // what is left to decode
	s   string // the same bytes as b
	err error
}

func newReader(v []byte) reader {
	return reader{b: v, s: string(v)}
}

func (r *reader) nextString() string {
	if r.err != nil {
		return ""
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err = errCorrupt
		return ""
	}
	if n > uint64(len(r.b)-k) { //nolint:gosec // G115: 0 < k <= len(r.b), so not negative
		r.err = errCorrupt
		return ""
	}
	end := k + int(n) //nolint:gosec // G115: n <= len(r.b)-k, an int
	str := r.s[k:end]
	r.b, r.s = r.b[end:], r.s[end:]
	return str
}

func (r *reader) nextByte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.err = errCorrupt
		return 0
	}
	c := r.b[0]
	r.b, r.s = r.b[1:], r.s[1:]
	return c
}

func encodePerson(version uint64, businessID, first, middle, last string) []byte {
	b := make([]byte, 0, 16+len(businessID)+len(first)+len(middle)+len(last))
	b = appendHeader(b, version, false)
	return appendStrings(b, businessID, first, middle, last)
}

// decodePerson decodes the fields of a live consumer or contact value (after
// the header); ID and Type are left for the caller.
func decodePerson(rest []byte) (events.Person, error) {
	r := newReader(rest)
	p := events.Person{BusinessID: r.nextString(), FirstName: r.nextString(), MiddleName: r.nextString(), LastName: r.nextString()}
	return p, r.err
}

func encodeSigner(version uint64, s *events.Signer) []byte {
	b := make([]byte, 0, 160)
	b = appendHeader(b, version, false)
	b = appendStrings(b, s.FirstName, s.MiddleName, s.LastName, string(s.AccountAccess), string(s.Status), string(s.Type))
	var f byte
	if s.HIPAAAuthorized {
		f |= sflagHIPAA
	}
	if s.Address != nil {
		f |= sflagAddress
	}
	if s.Phone != nil {
		f |= sflagPhone
	}
	b = append(b, f)
	if a := s.Address; a != nil {
		b = appendStrings(b, a.Line1, a.Line2, a.City, a.State, a.ZipCode, a.Country)
	}
	if p := s.Phone; p != nil {
		b = appendStrings(b, p.CountryCode, p.AreaCode, p.Number, p.Extension)
	}
	return appendStrings(b, s.SSN, s.DateOfBirth)
}

// decodeSigner decodes the fields of a live signer value (after the header);
// SignerID and ConsumerID are left for the caller.
func decodeSigner(rest []byte) (events.Signer, error) {
	r := newReader(rest)
	s := events.Signer{
		FirstName:     r.nextString(),
		MiddleName:    r.nextString(),
		LastName:      r.nextString(),
		AccountAccess: events.AccountAccess(r.nextString()),
		Status:        events.SignerStatus(r.nextString()),
		Type:          events.SignerType(r.nextString()),
	}
	f := r.nextByte()
	s.HIPAAAuthorized = f&sflagHIPAA != 0
	if f&sflagAddress != 0 {
		s.Address = &events.Address{Line1: r.nextString(), Line2: r.nextString(), City: r.nextString(), State: r.nextString(), ZipCode: r.nextString(), Country: r.nextString()}
	}
	if f&sflagPhone != 0 {
		s.Phone = &events.Phone{CountryCode: r.nextString(), AreaCode: r.nextString(), Number: r.nextString(), Extension: r.nextString()}
	}
	s.SSN = r.nextString()
	s.DateOfBirth = r.nextString()
	return s, r.err
}
