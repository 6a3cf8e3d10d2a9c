package ledger

import (
	"strconv"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/jsonstr"
)

// appendAnswer appends the JSON of p's record (format 3) as written by
// replica, up to its list of persons: what json.Marshal writes of an
// answer (the same fields, order and omissions) up to `"disclosed":[`,
// without its reflection. The caller appends the persons (appendPerson)
// and `]}`. A test holds the two equal.
func appendAnswer(dst []byte, p *pending, replica string) []byte {
	d := &p.d
	dst = append(dst, `{"time":"`...)
	dst = p.time.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","request_id":`...)
	dst = jsonstr.Append(dst, d.RequestID)
	dst = appendOpt(dst, `,"sub":`, d.Subject)
	dst = appendOpt(dst, `,"client":`, d.Client)
	if len(d.Tenants) > 0 {
		dst = append(dst, `,"tenants":[`...)
		for i, t := range d.Tenants {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonstr.Append(dst, t)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"operation":`...)
	dst = jsonstr.Append(dst, d.Operation)
	dst = appendOpt(dst, `,"purpose":`, d.Purpose)
	dst = appendOpt(dst, `,"requested":`, d.Requested)
	dst = append(dst, `,"persons":`...)
	dst = strconv.AppendInt(dst, int64(len(d.Persons)), 10)
	dst = append(dst, `,"replica":`...)
	dst = jsonstr.Append(dst, replica)
	dst = append(dst, `,"read_model_sequence":`...)
	dst = strconv.AppendUint(dst, p.pos, 10)
	return append(dst, `,"disclosed":[`...)
}

// appendPerson appends the JSON of what an answer disclosed of person dp:
// what json.Marshal writes of a Disclosed.
func appendPerson(dst []byte, dp *events.DisclosedPerson) []byte {
	dst = append(dst, `{"person_id":`...)
	dst = jsonstr.Append(dst, dp.ID)
	dst = appendOpt(dst, `,"ssn_mode":`, dp.SSNMode)
	if dp.DOB {
		dst = append(dst, `,"dob_disclosed":true`...)
	}
	return append(dst, '}')
}

// appendOpt appends key and s unless s is empty (omitempty).
func appendOpt(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return jsonstr.Append(append(dst, key...), s)
}
