package ledger

import (
	"strconv"
	"time"

	"github.com/lookup/persons/internal/jsonstr"
)

// appendRecord appends the JSON of r to dst: what json.Marshal writes (the
// same fields, order and omissions), without its reflection, which the
// protected path pays once per record. A test holds the two equal.
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

// appendOpt appends key and s unless s is empty (omitempty).
func appendOpt(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return jsonstr.Append(append(dst, key...), s)
}
