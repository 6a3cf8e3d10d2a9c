package ledger

import (
	"strconv"
	"time"

	"github.com/lookup/persons/internal/jsonstr"
)

// The writer of format 2, one record per disclosed person, as Ledgers
// wrote it before format 3: kept for the tests alone, which hold every
// reader to the messages it wrote (internal/testing/accountingtest
// writes them too, with json.Marshal of a Message, what this writes).

// record sets r to p's format 2 record of its i-th person, written by
// replica, without its chain fields.
func (p *pending) record(i int, replica string, r *Record) {
	d, dp := &p.d, &p.d.Persons[i]
	*r = Record{Time: p.time, RequestID: d.RequestID, Subject: d.Subject, Client: d.Client,
		Tenants: d.Tenants, Operation: d.Operation, PersonID: dp.ID, SSNMode: dp.SSNMode,
		DOBDisclosed: dp.DOB, Purpose: d.Purpose, Requested: d.Requested, Persons: len(d.Persons), Replica: replica,
		ReadModelSeq: p.pos}
}

// outbox2 writes a format 2 message, record by record: what json.Marshal
// writes of a Message of Version Format2.
type outbox2 struct {
	buf                  []byte
	n                    int // records written
	maxRecords, maxBytes int
}

// start begins the message seq of replica's chain, after prev.
func (o *outbox2) start(replica string, seq uint64, prev string) {
	o.buf = appendHead(o.buf[:0], Format2, replica, seq, prev)
	o.n = 0
}

// add writes r unless the message holds maxRecords already or would
// outgrow maxBytes with it; the first record is always written.
func (o *outbox2) add(r *Record) bool {
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

// finish ends the message and returns its bytes.
func (o *outbox2) finish() []byte {
	o.buf = append(o.buf, ']', '}')
	return o.buf
}

// appendRecord appends the JSON of r to dst: what json.Marshal writes (the
// same fields, order and omissions).
func appendRecord(dst []byte, r *Record) []byte {
	dst = append(dst, `{"time":"`...)
	dst = r.Time.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","request_id":`...)
	dst = jsonstr.Append(dst, r.RequestID)
	dst = appendOpt(dst, `,"sub":`, r.Subject)
	dst = appendOpt(dst, `,"client":`, r.Client)
	if len(r.Tenants) > 0 {
		dst = append(dst, `,"tenants":[`...)
		for i, t := range r.Tenants {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonstr.Append(dst, t)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"operation":`...)
	dst = jsonstr.Append(dst, r.Operation)
	dst = append(dst, `,"person_id":`...)
	dst = jsonstr.Append(dst, r.PersonID)
	dst = appendOpt(dst, `,"ssn_mode":`, r.SSNMode)
	if r.DOBDisclosed {
		dst = append(dst, `,"dob_disclosed":true`...)
	}
	dst = appendOpt(dst, `,"purpose":`, r.Purpose)
	dst = appendOpt(dst, `,"requested":`, r.Requested)
	dst = append(dst, `,"persons":`...)
	dst = strconv.AppendInt(dst, int64(r.Persons), 10)
	dst = append(dst, `,"replica":`...)
	dst = jsonstr.Append(dst, r.Replica)
	dst = append(dst, `,"read_model_sequence":`...)
	dst = strconv.AppendUint(dst, r.ReadModelSeq, 10)
	dst = appendOpt(dst, `,"chain":`, r.Chain)
	if r.Seq != 0 {
		dst = strconv.AppendUint(append(dst, `,"seq":`...), r.Seq, 10)
	}
	if r.Index != 0 {
		dst = strconv.AppendInt(append(dst, `,"index":`...), int64(r.Index), 10)
	}
	dst = appendOpt(dst, `,"prev":`, r.Prev)
	return append(dst, '}')
}
