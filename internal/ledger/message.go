package ledger

import (
	"fmt"
	"strconv"

	"github.com/lookup/persons/internal/jsonstr"
)

// FormatVersion is the version of the message format a Ledger writes
// (docs/audit-ledger-format.md). Format 1 was one Record per message.
const FormatVersion = 2

// Message is a stored message of format 2: the records of the
// disclosures gathered into one write, chained to the replica's previous
// message.
type Message struct {
	Version int    `json:"v"`       // FormatVersion
	Replica string `json:"replica"` // the replica's name, as in its records
	// Seq is the message's place in its replica's chain (from 1), Prev the
	// hex SHA-256 of the chain's previous message's bytes ("" for the
	// first).
	Seq     uint64   `json:"seq"`
	Prev    string   `json:"prev,omitempty"`
	Records []Record `json:"records"`
}

// decodeMessage parses a stored format 2 message.
func decodeMessage(data []byte) (Message, error) {
	var m Message
	if err := unmarshalMessage(data, &m); err != nil {
		return m, fmt.Errorf("audit message: %w", err)
	}
	if m.Version != FormatVersion {
		return m, fmt.Errorf("audit message: format %d, want %d", m.Version, FormatVersion)
	}
	if m.Seq == 0 || len(m.Records) == 0 {
		return m, fmt.Errorf("audit message: no seq or no records")
	}
	return m, nil
}

// recordsOf returns the records of m as stored on subject, each with
// where it is stored (Chain, Seq, Index).
func recordsOf(subject string, m Message) []Record {
	chain := subject[len(ReplicaSubjectPrefix):]
	for i := range m.Records {
		r := &m.Records[i]
		r.Chain, r.Seq, r.Index, r.Prev = chain, m.Seq, i+1, ""
	}
	return m.Records
}

// outbox writes a message, record by record, into a buffer it reuses
// from message to message: what json.Marshal writes of a Message (a test
// holds the two equal), without its reflection.
type outbox struct {
	buf []byte
	n   int // records written
	// The bounds of a message: it takes no record beyond maxRecords or
	// maxBytes (but always its first).
	maxRecords, maxBytes int
}

// start begins the message seq of replica's chain, after prev.
func (o *outbox) start(replica string, seq uint64, prev string) {
	o.buf = append(o.buf[:0], `{"v":`...)
	o.buf = strconv.AppendInt(o.buf, FormatVersion, 10)
	o.buf = append(o.buf, `,"replica":`...)
	o.buf = jsonstr.Append(o.buf, replica)
	o.buf = append(o.buf, `,"seq":`...)
	o.buf = strconv.AppendUint(o.buf, seq, 10)
	o.buf = appendOpt(o.buf, `,"prev":`, prev)
	o.buf = append(o.buf, `,"records":[`...)
	o.n = 0
}

// add writes r unless the message holds maxRecords already or would
// outgrow maxBytes with it; the first record is always written.
func (o *outbox) add(r *Record) bool {
	if o.n > 0 && o.n >= o.maxRecords {
		return false
	}
	mark := len(o.buf)
	if o.n > 0 {
		o.buf = append(o.buf, ',')
	}
	o.buf = appendRecord(o.buf, r)
	if o.n > 0 && len(o.buf)+len(`]}`) > o.maxBytes {
		o.buf = o.buf[:mark]
		return false
	}
	o.n++
	return true
}

// finish ends the message and returns its bytes, valid until the next
// start.
func (o *outbox) finish() []byte {
	o.buf = append(o.buf, ']', '}')
	return o.buf
}
