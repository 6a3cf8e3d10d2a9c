package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lookup/persons/internal/jsonstr"
)

// FormatVersion is the version of the message format a Ledger writes
// (docs/audit-ledger-format.md): format 3, one record per answer, listing
// the persons it disclosed. Readers read Format2 too, one record per
// disclosed person; format 1 was one such record per message.
const FormatVersion = 3

// Format2 is the version of the messages written before format 3: one
// record per disclosed person. Ledgers no longer write it (tests do, to
// hold the readers to it).
const Format2 = 2

// Message is a stored message of format 2 or 3, as read: the records of
// the disclosures gathered into one write, one per disclosed person
// whatever the format (a format 3 record, one answer's, is read as one
// Record per person it lists), chained to the replica's previous
// message. Marshalled with Version Format2, it is the format 2 message
// of its records.
type Message struct {
	Version int    `json:"v"`       // Format2 or FormatVersion
	Replica string `json:"replica"` // the replica's name, as in its records
	// Seq is the message's place in its replica's chain (from 1), Prev the
	// hex SHA-256 of the chain's previous message's bytes ("" for the
	// first).
	Seq     uint64   `json:"seq"`
	Prev    string   `json:"prev,omitempty"`
	Records []Record `json:"records"`
}

// answerMessage is a stored message of format 3: its records are
// answers.
type answerMessage struct {
	Version int      `json:"v"`
	Replica string   `json:"replica"`
	Seq     uint64   `json:"seq"`
	Prev    string   `json:"prev,omitempty"`
	Records []answer `json:"records"`
}

// answer is a record of format 3: one answer (or the part of it a message
// holds, when its persons did not fit in one), the persons it disclosed
// in Disclosed, in the answer's order. Its other fields are those of a
// format 2 record; Persons counts the answer's persons, in this message
// and others.
type answer struct {
	Time         time.Time   `json:"time"`
	RequestID    string      `json:"request_id"`
	Subject      string      `json:"sub,omitempty"`
	Client       string      `json:"client,omitempty"`
	Tenants      []string    `json:"tenants,omitempty"`
	Operation    string      `json:"operation"`
	Purpose      string      `json:"purpose,omitempty"`
	Requested    string      `json:"requested,omitempty"`
	Persons      int         `json:"persons"`
	Replica      string      `json:"replica"`
	ReadModelSeq uint64      `json:"read_model_sequence"`
	Disclosed    []Disclosed `json:"disclosed"`
}

// Disclosed is what a format 3 record says of one person it disclosed.
type Disclosed struct {
	PersonID     string `json:"person_id"`
	SSNMode      string `json:"ssn_mode,omitempty"`
	DOBDisclosed bool   `json:"dob_disclosed,omitempty"`
}

// errNoPersons is a format 3 record that lists no person.
var errNoPersons = errors.New("a format 3 record lists no person")

// expand appends to dst the records of a: one per person it lists.
func (a *answer) expand(dst []Record) ([]Record, error) {
	if len(a.Disclosed) == 0 {
		return dst, errNoPersons
	}
	base := Record{Time: a.Time, RequestID: a.RequestID, Subject: a.Subject, Client: a.Client, Tenants: a.Tenants,
		Operation: a.Operation, Purpose: a.Purpose, Requested: a.Requested, Persons: a.Persons, Replica: a.Replica,
		ReadModelSeq: a.ReadModelSeq}
	for _, d := range a.Disclosed {
		r := base
		r.PersonID, r.SSNMode, r.DOBDisclosed = d.PersonID, d.SSNMode, d.DOBDisclosed
		dst = append(dst, r)
	}
	return dst, nil
}

// decodeMessage parses a stored message of format 2 or 3.
func decodeMessage(data []byte) (Message, error) {
	var m Message
	if err := unmarshalMessage(data, &m); err != nil {
		return m, fmt.Errorf("audit message: %w", err)
	}
	if m.Version != Format2 && m.Version != FormatVersion {
		return m, fmt.Errorf("audit message: format %d, want %d or %d", m.Version, Format2, FormatVersion)
	}
	if m.Seq == 0 || len(m.Records) == 0 {
		return m, fmt.Errorf("audit message: no seq or no records")
	}
	return m, nil
}

// jsonMessage parses data into m with json.Unmarshal: a message of
// format 3 as an answerMessage whose records are then expanded, one per
// person; any other as a Message.
func jsonMessage(data []byte, m *Message) error {
	var v struct {
		Version int `json:"v"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if v.Version != FormatVersion {
		return json.Unmarshal(data, m)
	}
	var am answerMessage
	if err := json.Unmarshal(data, &am); err != nil {
		return err
	}
	*m = Message{Version: am.Version, Replica: am.Replica, Seq: am.Seq, Prev: am.Prev}
	for i := range am.Records {
		var err error
		if m.Records, err = am.Records[i].expand(m.Records); err != nil {
			return err
		}
	}
	return nil
}

// recordsOf returns the records of m as stored on subject, each with
// where it is stored (Chain, Seq, Index). Index is the record's place in
// the message, from 1: in format 3, the person's place among the persons
// the message lists, counted across its records in order.
func recordsOf(subject string, m Message) []Record {
	chain := subject[len(ReplicaSubjectPrefix):]
	for i := range m.Records {
		r := &m.Records[i]
		r.Chain, r.Seq, r.Index, r.Prev = chain, m.Seq, i+1, ""
	}
	return m.Records
}

// outbox writes a message of format 3, answer by answer, into a buffer
// it reuses from message to message: what json.Marshal writes of an
// answerMessage (a test holds the two equal), without its reflection.
type outbox struct {
	buf     []byte
	n       int // persons written
	answers int // records written
	// The bounds of a message: it takes no person beyond maxRecords or
	// maxBytes (but always its first).
	maxRecords, maxBytes int
}

// start begins the message seq of replica's chain, after prev.
func (o *outbox) start(replica string, seq uint64, prev string) {
	o.buf = appendHead(o.buf[:0], FormatVersion, replica, seq, prev)
	o.n, o.answers = 0, 0
}

// appendHead appends to buf the head of a message of format version, the
// message seq of replica's chain after prev, up to its records' array.
func appendHead(buf []byte, version int64, replica string, seq uint64, prev string) []byte {
	buf = append(buf, `{"v":`...)
	buf = strconv.AppendInt(buf, version, 10)
	buf = append(buf, `,"replica":`...)
	buf = jsonstr.Append(buf, replica)
	buf = append(buf, `,"seq":`...)
	buf = strconv.AppendUint(buf, seq, 10)
	buf = appendOpt(buf, `,"prev":`, prev)
	return append(buf, `,"records":[`...)
}

// add writes the record of p, written by replica, with its persons from
// from on, as many as the message takes: none beyond maxRecords persons,
// none that would make it outgrow maxBytes (the first person of the
// message is always written). It returns the index of the first person
// it did not write (p.records() when it wrote them all); a record of no
// person is not written.
func (o *outbox) add(p *pending, replica string, from int) int {
	if o.n > 0 && o.n >= o.maxRecords {
		return from
	}
	mark := len(o.buf)
	if o.answers > 0 {
		o.buf = append(o.buf, ',')
	}
	o.buf = appendAnswer(o.buf, p, replica)
	i := from
	for ; i < p.records() && (o.n == 0 || o.n < o.maxRecords); i++ {
		at := len(o.buf)
		if i > from {
			o.buf = append(o.buf, ',')
		}
		o.buf = appendPerson(o.buf, &p.d.Persons[i])
		if o.n > 0 && len(o.buf)+len(`]}]}`) > o.maxBytes {
			o.buf = o.buf[:at]
			break
		}
		o.n++
	}
	if i == from {
		o.buf = o.buf[:mark]
		return from
	}
	o.buf = append(o.buf, ']', '}')
	o.answers++
	return i
}

// finish ends the message and returns its bytes, valid until the next
// start.
func (o *outbox) finish() []byte {
	o.buf = append(o.buf, ']', '}')
	return o.buf
}
