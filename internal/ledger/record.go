// Package ledger writes and verifies the audit ledger: a tamper-evident
// record, in a JetStream stream, of every API answer that disclosed
// protected personal data (an SSN, whole or in part, or a date of birth).
// What the ledger holds is read for people by the accounting
// (internal/accounting), which indexes it.
//
// A Ledger implements query.Auditor (the wiring gives it to the API): the
// API hands it each events.Disclosure before it sends the answer. The
// unit of accounting is one Record per disclosed person, which is what
// every reader gets; the Ledger stores one record per disclosure (format
// 3), listing its persons, and gathers the records of the disclosures
// that arrive while its earlier messages are being stored into one
// message (group commit) on its replica's own subject,
// "audit.replicas.<replica>",
// so that the stream holds one subject per replica, not one per person.
// Each replica's messages form one hash chain that runs on across restarts
// (every message carries its sequence in the chain and the SHA-256 of the
// previous message's bytes), and Verify checks every chain. ScanPerson
// lists a person's disclosures by scanning the stream (the accounting
// service indexes them, internal/accounting, and renders them as FHIR
// AuditEvents, internal/accounting/fhir). docs/audit-ledger-format.md
// describes the format.
//
// Streams written before format 3 hold format 2 messages, one record per
// disclosed person, and before format 2 one record per message on
// "audit.persons.<person_id>" (format 1); every reader reads the three.
//
// A record never holds an SSN, a date of birth or a token: only which
// fields were disclosed.
package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Record is one disclosure of one person's protected data, as every
// reader gets it: a format 2 record (or a format 1 message body), in
// JSON, or one person of a format 3 record with its answer's fields.
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
	// Requested is the date (YYYY-MM-DD) of the person's request that
	// an accounting given to them answers (operation provideAccounting,
	// 45 CFR 164.528(d)); "" otherwise.
	Requested string `json:"requested,omitempty"`
	// Persons is the number of persons the answer disclosed (one Record
	// each, all with this RequestID).
	Persons int    `json:"persons"`
	Replica string `json:"replica"`
	// ReadModelSeq is the read model's position (the last stream sequence
	// applied) when the answer was recorded.
	ReadModelSeq uint64 `json:"read_model_sequence"`
	// Where the record is stored. Within a message these are not
	// written (the message holds them); a record read back has Chain
	// (the replica's chain: the last token of its subject), Seq (the
	// message's place in the chain) and Index (the record's place in the
	// message, from 1; in format 3, the person's place among the persons
	// the message's records list, in order). A format 1 record has Chain
	// (one per process), Seq and Prev (the hex SHA-256 of the chain's
	// previous record's bytes).
	Chain string `json:"chain,omitempty"`
	Seq   uint64 `json:"seq,omitempty"`
	Index int    `json:"index,omitempty"`
	Prev  string `json:"prev,omitempty"`
}

// LegacySubjectPrefix is the prefix of the subjects of format 1 records,
// one per message: a person's records were on LegacySubjectPrefix +
// person id. Ledgers no longer write there.
const LegacySubjectPrefix = "audit.persons."

// ReplicaSubjectPrefix is the prefix of the subjects of format 2 and 3
// messages: a replica's chain is on ReplicaSubjectPrefix + its token.
const ReplicaSubjectPrefix = "audit.replicas."

// ReplicaSubject returns the subject of the chain of the replica named
// replica: its name as one subject token (see replicaToken).
func ReplicaSubject(replica string) string { return ReplicaSubjectPrefix + replicaToken(replica) }

// replicaToken returns name as a subject token: each character a subject
// token may not hold (".", "*", ">", white space and control characters)
// becomes "_", and "" becomes "unnamed". Two names with the same token
// share a chain, which stays intact (each message names the one before).
func replicaToken(name string) string {
	if name == "" {
		return "unnamed"
	}
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '*' || r == '>' || r <= ' ' || r == 0x7f || unicode.IsSpace(r) {
			return '_'
		}
		return r
	}, name)
}

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
