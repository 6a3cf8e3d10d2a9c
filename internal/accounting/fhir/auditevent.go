package fhir

import (
	"fmt"
	"time"

	"github.com/lookup/persons/internal/ledger"
)

// The FHIR R4 code systems and profile of an AuditEvent shaped as IHE
// Basic Audit Log Patterns' patient-read pattern.
const (
	balpPatientRead  = "https://profiles.ihe.net/ITI/BALP/StructureDefinition/IHE.BasicAudit.PatientRead"
	balpEntityType   = "https://profiles.ihe.net/ITI/BALP/CodeSystem/BasicAuditEntityType"
	auditEventType   = "http://terminology.hl7.org/CodeSystem/audit-event-type"
	restfulInteract  = "http://hl7.org/fhir/restful-interaction"
	dicomDCM         = "http://dicom.nema.org/resources/ontology/DCM"
	participantType  = "http://terminology.hl7.org/CodeSystem/v3-ParticipationType"
	entityTypeSystem = "http://terminology.hl7.org/CodeSystem/audit-entity-type"
	objectRoleSystem = "http://terminology.hl7.org/CodeSystem/object-role"
	sourceTypeSystem = "http://terminology.hl7.org/CodeSystem/security-source-type"
	// personSystem names the identifiers of persons in this service.
	personSystem = "urn:lookup:person-id"
)

// Coding is a FHIR Coding.
type Coding struct {
	System  string `json:"system,omitempty"`
	Code    string `json:"code"`
	Display string `json:"display,omitempty"`
}

// CodeableConcept is a FHIR CodeableConcept.
type CodeableConcept struct {
	Coding []Coding `json:"coding,omitempty"`
	Text   string   `json:"text,omitempty"`
}

// Identifier is a FHIR Identifier.
type Identifier struct {
	System string `json:"system,omitempty"`
	Value  string `json:"value"`
}

// Reference is a FHIR Reference.
type Reference struct {
	Reference  string      `json:"reference,omitempty"`
	Identifier *Identifier `json:"identifier,omitempty"`
	Display    string      `json:"display,omitempty"`
}

// AuditEvent is the subset of the FHIR R4 AuditEvent resource lookupd
// writes.
type AuditEvent struct {
	ResourceType   string            `json:"resourceType"`
	ID             string            `json:"id"`
	Meta           map[string]any    `json:"meta"`
	Type           Coding            `json:"type"`
	Subtype        []Coding          `json:"subtype"`
	Action         string            `json:"action"`
	Recorded       string            `json:"recorded"`
	Outcome        string            `json:"outcome"`
	PurposeOfEvent []CodeableConcept `json:"purposeOfEvent,omitempty"`
	Agent          []Agent           `json:"agent"`
	Source         Source            `json:"source"`
	Entity         []Entity          `json:"entity"`
}

// Agent is an AuditEvent.agent.
type Agent struct {
	Type      *CodeableConcept `json:"type,omitempty"`
	Who       *Reference       `json:"who,omitempty"`
	Requestor bool             `json:"requestor"`
}

// Source is an AuditEvent.source.
type Source struct {
	Site     string    `json:"site,omitempty"`
	Observer Reference `json:"observer"`
	Type     []Coding  `json:"type,omitempty"`
}

// Entity is an AuditEvent.entity.
type Entity struct {
	What   *Reference     `json:"what,omitempty"`
	Type   *Coding        `json:"type,omitempty"`
	Role   *Coding        `json:"role,omitempty"`
	Detail []EntityDetail `json:"detail,omitempty"`
}

// EntityDetail is an AuditEvent.entity.detail.
type EntityDetail struct {
	Type        string `json:"type"`
	ValueString string `json:"valueString"`
}

// Bundle is a FHIR R4 Bundle of AuditEvents.
type Bundle struct {
	ResourceType string `json:"resourceType"`
	Type         string `json:"type"`
	Timestamp    string `json:"timestamp"`
	// Total is the number of matches, when known (a page of a longer
	// search leaves it out).
	Total *int          `json:"total,omitempty"`
	Link  []BundleLink  `json:"link,omitempty"`
	Entry []BundleEntry `json:"entry"`
}

// BundleLink is a Bundle.link: relation self or next.
type BundleLink struct {
	Relation string `json:"relation"`
	URL      string `json:"url"`
}

// BundleEntry is one entry of a Bundle.
type BundleEntry struct {
	FullURL  string     `json:"fullUrl"`
	Resource AuditEvent `json:"resource"`
}

// FHIRBundle returns recs as a FHIR R4 Bundle (type searchset) of
// AuditEvent resources, in the order given.
func FHIRBundle(recs []ledger.Record, now time.Time) Bundle {
	total := len(recs)
	b := Bundle{ResourceType: "Bundle", Type: "searchset", Timestamp: now.UTC().Format(time.RFC3339),
		Total: &total, Entry: make([]BundleEntry, len(recs))}
	for i, r := range recs {
		ev := auditEvent(r)
		b.Entry[i] = BundleEntry{FullURL: "urn:lookup:audit:" + ev.ID, Resource: ev}
	}
	return b
}

// auditEvent shapes one record as a BALP patient-read AuditEvent: a
// RESTful read (action R) by a client application (and its user, the
// token's subject) from this service (the source), of one person (the
// patient entity) within one request (the X-Request-Id entity).
func auditEvent(r ledger.Record) AuditEvent {
	ev := AuditEvent{
		ResourceType: "AuditEvent",
		ID:           eventID(r),
		Meta:         map[string]any{"profile": []string{balpPatientRead}},
		Type:         Coding{System: auditEventType, Code: "rest", Display: "RESTful Operation"},
		Subtype:      []Coding{{System: restfulInteract, Code: "read", Display: "read"}},
		Action:       "R",
		Recorded:     r.Time.UTC().Format(time.RFC3339Nano),
		Outcome:      "0",
		Source: Source{Site: r.Replica, Observer: Reference{Display: "lookupd " + r.Replica},
			Type: []Coding{{System: sourceTypeSystem, Code: "4", Display: "Application Server"}}},
	}
	if r.Purpose != "" {
		ev.PurposeOfEvent = []CodeableConcept{{Text: r.Purpose}}
	}
	ev.Agent = []Agent{
		{Type: &CodeableConcept{Coding: []Coding{{System: dicomDCM, Code: "110153", Display: "Source Role ID"}}},
			Who: &Reference{Display: "lookupd " + r.Replica}, Requestor: false},
		{Type: &CodeableConcept{Coding: []Coding{{System: dicomDCM, Code: "110152", Display: "Destination Role ID"}}},
			Who: &Reference{Identifier: &Identifier{Value: orUnknown(r.Client)}}, Requestor: false},
	}
	if r.Subject != "" {
		ev.Agent = append(ev.Agent, Agent{
			Type:      &CodeableConcept{Coding: []Coding{{System: participantType, Code: "IRCP", Display: "information recipient"}}},
			Who:       &Reference{Identifier: &Identifier{Value: r.Subject}},
			Requestor: true,
		})
	} else {
		ev.Agent[1].Requestor = true
	}
	ev.Entity = []Entity{patientEntity(r), {
		What: &Reference{Identifier: &Identifier{Value: r.RequestID}},
		Type: &Coding{System: balpEntityType, Code: "XrequestId", Display: "X-Request-Id"},
	}}
	return ev
}

// patientEntity is the entity of the person whose data was disclosed, with
// which protected fields were (never their values).
func patientEntity(r ledger.Record) Entity {
	e := Entity{
		What: &Reference{Reference: "Patient/" + r.PersonID, Identifier: &Identifier{System: personSystem, Value: r.PersonID}},
		Type: &Coding{System: entityTypeSystem, Code: "1", Display: "Person"},
		Role: &Coding{System: objectRoleSystem, Code: "1", Display: "Patient"},
	}
	if r.SSNMode != "" {
		e.Detail = append(e.Detail, EntityDetail{Type: "ssn_mode", ValueString: r.SSNMode})
	}
	if r.DOBDisclosed {
		e.Detail = append(e.Detail, EntityDetail{Type: "date_of_birth", ValueString: "disclosed"})
	}
	if r.Requested != "" { // an accounting given to the person: the date of their request
		e.Detail = append(e.Detail, EntityDetail{Type: "accounting_requested", ValueString: r.Requested})
	}
	e.Detail = append(e.Detail, EntityDetail{Type: "operation", ValueString: r.Operation})
	return e
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// eventID returns the AuditEvent id of r: where it is stored, chain-seq
// for a format 1 record, chain-seq-index for a person's record of a
// format 2 or 3 message (which holds many; accounting.Reference).
func eventID(r ledger.Record) string {
	if r.Index > 0 {
		return fmt.Sprintf("%s-%d-%d", r.Chain, r.Seq, r.Index)
	}
	return fmt.Sprintf("%s-%d", r.Chain, r.Seq)
}
