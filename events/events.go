// Package events is the shared vocabulary of the Person and Authorized Signer
// Lookup service and its contract with upstream publishers: the records and
// enums of the domain, the CloudEvents envelope of the v1 event contract
// (docs/events.md), its decoding and validation, the JSON Schemas that
// publishers in other languages validate against (events/schema), and a
// Publisher for upstream Go services.
//
// The package imports nothing else of this module; every other package
// depends on it.
package events

import (
	"errors"
	"slices"
)

// ErrNotFound is returned by reads of the read model when the requested
// person, or the signers of the requested consumer, do not exist.
var ErrNotFound = errors.New("not found")

// PersonType tells whether a Person is a consumer or a business contact.
type PersonType string

// The person types of the API.
const (
	PersonTypeConsumer        PersonType = "CONSUMER"
	PersonTypeBusinessContact PersonType = "BUSINESS_CONTACT"
)

// AccountAccess is the level of account access a signer holds.
type AccountAccess string

// The account access levels.
const (
	AccountAccessNone                 AccountAccess = "NONE"
	AccountAccessPHI                  AccountAccess = "PHI"
	AccountAccessPHIAndAccountUpdates AccountAccess = "PHI_AND_ACCOUNT_UPDATES"
	AccountAccessUnspecified          AccountAccess = "UNSPECIFIED"
)

// Valid reports whether a is one of the defined account access levels.
func (a AccountAccess) Valid() bool {
	return slices.Contains([]AccountAccess{AccountAccessNone, AccountAccessPHI, AccountAccessPHIAndAccountUpdates, AccountAccessUnspecified}, a)
}

// SignerStatus is the state of an authorized signer.
type SignerStatus string

// The signer states.
const (
	SignerStatusActive   SignerStatus = "ACTIVE"
	SignerStatusInactive SignerStatus = "INACTIVE"
	SignerStatusPending  SignerStatus = "PENDING"
	SignerStatusArchived SignerStatus = "ARCHIVED"
)

// Valid reports whether s is one of the defined signer states.
func (s SignerStatus) Valid() bool {
	return slices.Contains([]SignerStatus{SignerStatusActive, SignerStatusInactive, SignerStatusPending, SignerStatusArchived}, s)
}

// SignerType is the legal capacity in which a signer acts.
type SignerType string

// The signer types.
const (
	SignerTypeAuthorizedSigner         SignerType = "AUTHORIZED_SIGNER"
	SignerTypePowerOfAttorney          SignerType = "POWER_OF_ATTORNEY"
	SignerTypeAuthorizedRepresentative SignerType = "AUTHORIZED_REPRESENTATIVE"
	SignerTypeGuardian                 SignerType = "GUARDIAN"
	SignerTypeParent                   SignerType = "PARENT"
	SignerTypeConservator              SignerType = "CONSERVATOR"
)

// Valid reports whether t is one of the defined signer types.
func (t SignerType) Valid() bool {
	return slices.Contains([]SignerType{SignerTypeAuthorizedSigner, SignerTypePowerOfAttorney, SignerTypeAuthorizedRepresentative,
		SignerTypeGuardian, SignerTypeParent, SignerTypeConservator}, t)
}

// Address is a signer's postal address. Line2 is optional.
type Address struct {
	Line1   string `json:"line1"`
	Line2   string `json:"line2,omitempty"`
	City    string `json:"city"`
	State   string `json:"state"`
	ZipCode string `json:"zip_code"`
	Country string `json:"country"`
}

// Phone is a signer's phone number. Extension is optional.
type Phone struct {
	CountryCode string `json:"country_code"`
	AreaCode    string `json:"area_code"`
	Number      string `json:"number"`
	Extension   string `json:"extension,omitempty"`
}

// Consumer is the data of a persons.consumer.upserted.v1 event: the full
// state of a consumer. MiddleName is optional ("" when unknown).
type Consumer struct {
	ConsumerID string `json:"consumer_id"`
	BusinessID string `json:"business_id"`
	FirstName  string `json:"first_name"`
	MiddleName string `json:"middle_name,omitempty"`
	LastName   string `json:"last_name"`
}

// BusinessContact is the data of a persons.business_contact.upserted.v1
// event: the full state of a business contact.
type BusinessContact struct {
	ContactID  string `json:"contact_id"`
	BusinessID string `json:"business_id"`
	FirstName  string `json:"first_name"`
	MiddleName string `json:"middle_name,omitempty"`
	LastName   string `json:"last_name"`
}

// Signer is the data of a persons.authorized_signer.upserted.v1 event: the
// full state of one authorized signer of one consumer.
//
// SSN, when known, is normalised by decoding to nine digits without dashes;
// DateOfBirth, when known, is a valid calendar date written YYYY-MM-DD.
// Optional fields that are unknown are zero ("" or nil).
type Signer struct {
	SignerID        string        `json:"signer_id"`
	ConsumerID      string        `json:"consumer_id"`
	FirstName       string        `json:"first_name"`
	MiddleName      string        `json:"middle_name,omitempty"`
	LastName        string        `json:"last_name"`
	HIPAAAuthorized bool          `json:"hipaa_authorized"`
	AccountAccess   AccountAccess `json:"account_access"`
	Status          SignerStatus  `json:"status"`
	Type            SignerType    `json:"type"`
	Address         *Address      `json:"address,omitempty"`
	Phone           *Phone        `json:"phone,omitempty"`
	SSN             string        `json:"social_security_number,omitempty"`
	DateOfBirth     string        `json:"date_of_birth,omitempty"`
}

// ConsumerDeleted is the data of a persons.consumer.deleted.v1 event.
type ConsumerDeleted struct {
	ConsumerID string `json:"consumer_id"`
}

// BusinessContactDeleted is the data of a persons.business_contact.deleted.v1 event.
type BusinessContactDeleted struct {
	ContactID string `json:"contact_id"`
}

// SignerDeleted is the data of a persons.authorized_signer.deleted.v1 event.
type SignerDeleted struct {
	SignerID   string `json:"signer_id"`
	ConsumerID string `json:"consumer_id"`
}

// Person is the read-side view of a consumer or a business contact, as the
// Get Person operation returns it.
type Person struct {
	ID         string
	BusinessID string
	FirstName  string
	MiddleName string
	LastName   string
	Type       PersonType
}
