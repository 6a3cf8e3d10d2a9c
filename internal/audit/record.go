// Package audit is the accounting of disclosures: a tamper-evident ledger,
// in a JetStream stream, of every API answer that disclosed protected
// personal data (an SSN, whole or in part, or a date of birth).
//
// A Ledger implements query.Auditor: the API hands it each disclosure
// before it sends the answer, and the Ledger publishes one Record per
// disclosed person on "audit.persons.<person_id>" (so that one person's
// accounting is a subject filter), with a Nats-Msg-Id that makes retries
// idempotent. Each Ledger (one per running replica) chains its records:
// every record carries its chain, its sequence in the chain and the
// SHA-256 of the previous record's bytes, and Verify checks every chain.
// Accounting lists a person's disclosures and FHIRBundle renders them as
// FHIR R4 AuditEvent resources (IHE BALP patient-read pattern).
//
// A record never holds an SSN, a date of birth or a token: only which
// fields were disclosed.
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Record is one disclosure of one person's protected data: the stored
// message body, in JSON.
type Record struct {
	Time      time.Time `json:"time"`
	RequestID string    `json:"request_id"`
	Subject   string    `json:"sub,omitempty"`    // the token's sub
	Client    string    `json:"client,omitempty"` // the token's azp or client_id
	Tenants   []string  `json:"tenants,omitempty"`
	Operation string    `json:"operation"`
	PersonID  string    `json:"person_id"` // for a signer, the signer's id
	// SSNMode is the ssn_mode of the SSN disclosed ("" when none was);
	// DOBDisclosed says whether the date of birth was.
	SSNMode      string `json:"ssn_mode,omitempty"`
	DOBDisclosed bool   `json:"dob_disclosed,omitempty"`
	Purpose      string `json:"purpose,omitempty"` // the caller's Lookup-Purpose
	// Persons is the number of persons the answer disclosed (one record
	// each, all with this RequestID).
	Persons int    `json:"persons"`
	Replica string `json:"replica"`
	// ReadModelSeq is the read model's position (the last stream sequence
	// applied) when the answer was recorded.
	ReadModelSeq uint64 `json:"read_model_sequence"`
	// Chain identifies the chain of the Ledger that wrote the record (one
	// per process), Seq its place in it (from 1), and Prev the hex SHA-256
	// of the chain's previous record's bytes ("" for the first).
	Chain string `json:"chain"`
	Seq   uint64 `json:"seq"`
	Prev  string `json:"prev,omitempty"`
}

// SubjectPrefix is the prefix of the subjects of audit records; a
// person's records are on SubjectPrefix + person id.
const SubjectPrefix = "audit.persons."

// Subject returns the subject of the records of person id.
func Subject(personID string) string { return SubjectPrefix + personID }

// msgID returns the Nats-Msg-Id of a record: unique per chain and seq, so
// that a retried publish is stored once.
func msgID(chain string, seq uint64) string { return chain + "-" + strconv.FormatUint(seq, 10) }

// hashOf returns the hex SHA-256 of a record's bytes, as the next record
// of its chain holds in Prev.
func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:])
}

// decodeRecord parses a stored record.
func decodeRecord(data []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("audit record: %w", err)
	}
	return r, nil
}
