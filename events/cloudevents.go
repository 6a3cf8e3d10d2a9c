package events

import (
	"fmt"
	"time"
)

// Type is the CloudEvents type attribute of an event of the v1 contract.
type Type string

// The six event types of the v1 contract.
const (
	TypeConsumerUpserted        Type = "persons.consumer.upserted.v1"
	TypeConsumerDeleted         Type = "persons.consumer.deleted.v1"
	TypeBusinessContactUpserted Type = "persons.business_contact.upserted.v1"
	TypeBusinessContactDeleted  Type = "persons.business_contact.deleted.v1"
	TypeSignerUpserted          Type = "persons.authorized_signer.upserted.v1"
	TypeSignerDeleted           Type = "persons.authorized_signer.deleted.v1"
)

// Types lists the event types of the v1 contract.
var Types = []Type{
	TypeConsumerUpserted, TypeConsumerDeleted,
	TypeBusinessContactUpserted, TypeBusinessContactDeleted,
	TypeSignerUpserted, TypeSignerDeleted,
}

// Subject prefixes of the v1 contract. Subjects carry the entity ids:
//
//	persons.consumer.<consumer_id>
//	persons.business_contact.<contact_id>
//	persons.authorized_signer.<consumer_id>.<signer_id>
const (
	SubjectRoot                  = "persons"
	SubjectPrefixConsumer        = "persons.consumer."
	SubjectPrefixBusinessContact = "persons.business_contact."
	SubjectPrefixSigner          = "persons.authorized_signer."
)

// Kind is the kind of entity an event is about.
type Kind uint8

// The entity kinds.
const (
	KindConsumer Kind = iota + 1
	KindBusinessContact
	KindSigner
)

func (k Kind) String() string {
	switch k {
	case KindConsumer:
		return "consumer"
	case KindBusinessContact:
		return "business_contact"
	case KindSigner:
		return "authorized_signer"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Entity identifies the entity an event is about (docs/events.md):
// a consumer by ConsumerID, a business contact by ID, a signer by the pair
// (ConsumerID, ID). Ids are lower-case canonical UUIDs.
type Entity struct {
	Kind       Kind
	ID         string // consumer id, contact id or signer id
	ConsumerID string // the signer's consumer; equal to ID for a consumer; "" for a contact
}

// Subject returns the NATS subject that events about e are published on.
func (e Entity) Subject() string {
	switch e.Kind {
	case KindConsumer:
		return SubjectPrefixConsumer + e.ID
	case KindBusinessContact:
		return SubjectPrefixBusinessContact + e.ID
	case KindSigner:
		return SubjectPrefixSigner + e.ConsumerID + "." + e.ID
	}
	return ""
}

// Event is one decoded, valid event of the v1 contract.
//
// Data holds exactly one of Consumer, ConsumerDeleted, BusinessContact,
// BusinessContactDeleted, Signer or SignerDeleted (values, not pointers),
// matching Type.
type Event struct {
	ID            string
	Source        string
	Type          Type
	Time          time.Time // zero when the event carries no time
	EntityVersion uint64
	Data          any
	// TraceParent is the W3C trace context of the publisher (the
	// CloudEvents distributed tracing extension "traceparent"), "" when
	// the event carries none. Publisher sets it from its context.
	TraceParent string
}

// Entity returns the entity the event is about, derived from its data.
func (e Event) Entity() Entity {
	switch d := e.Data.(type) {
	case Consumer:
		return Entity{Kind: KindConsumer, ID: d.ConsumerID, ConsumerID: d.ConsumerID}
	case ConsumerDeleted:
		return Entity{Kind: KindConsumer, ID: d.ConsumerID, ConsumerID: d.ConsumerID}
	case BusinessContact:
		return Entity{Kind: KindBusinessContact, ID: d.ContactID}
	case BusinessContactDeleted:
		return Entity{Kind: KindBusinessContact, ID: d.ContactID}
	case Signer:
		return Entity{Kind: KindSigner, ID: d.SignerID, ConsumerID: d.ConsumerID}
	case SignerDeleted:
		return Entity{Kind: KindSigner, ID: d.SignerID, ConsumerID: d.ConsumerID}
	}
	return Entity{}
}

// Subject returns the subject the event belongs on.
func (e Event) Subject() string { return e.Entity().Subject() }

// InvalidEventError is returned by Decode for an event that breaks the v1
// contract. Field names the offending attribute or data field as a JSON
// path (for example "data.address.zip_code", "entityversion", "subject");
// Reason says what is wrong with it.
type InvalidEventError struct {
	Field  string
	Reason string
}

func (e *InvalidEventError) Error() string {
	if e.Field == "" {
		return "invalid event: " + e.Reason
	}
	return "invalid event: " + e.Field + ": " + e.Reason
}
