//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
)

// auditRecordsOf reads a message of the audit stream as a reader without
// lookupd would, from docs/audit-ledger-format.md: format 3, many records
// a message, each an answer listing the persons it disclosed, one
// auditRecord per person.
func auditRecordsOf(data []byte) ([]auditRecord, error) {
	var m struct {
		V       int `json:"v"`
		Records []struct {
			auditRecord
			Disclosed []struct {
				PersonID string `json:"person_id"`
				SSNMode  string `json:"ssn_mode"`
				DOB      bool   `json:"dob_disclosed"`
			} `json:"disclosed"`
		} `json:"records"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("message %s: %w", data, err)
	}
	if m.V != 3 || len(m.Records) == 0 {
		return nil, fmt.Errorf("message %s: format %d, %d records; want format 3 with records", data, m.V, len(m.Records))
	}
	var out []auditRecord
	for _, a := range m.Records {
		if len(a.Disclosed) == 0 {
			return nil, fmt.Errorf("message %s: a record lists no person", data)
		}
		for _, d := range a.Disclosed {
			r := a.auditRecord
			r.PersonID, r.SSNMode, r.DOB = d.PersonID, d.SSNMode, d.DOB
			out = append(out, r)
		}
	}
	return out, nil
}
