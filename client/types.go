package client

// The resources of the API, as query/openapi.yaml defines them. Optional
// fields the service leaves out (it never sends null) are the zero value
// here; a pointer marks an optional object.

// PersonType is what a person is: a consumer or a business contact.
type PersonType string

// The person types.
const (
	Consumer        PersonType = "CONSUMER"
	BusinessContact PersonType = "BUSINESS_CONTACT"
)

// AccountAccess is how far a signer may act on the consumer's account.
type AccountAccess string

// The account access levels.
const (
	AccountAccessNone                 AccountAccess = "NONE"
	AccountAccessPHI                  AccountAccess = "PHI"
	AccountAccessPHIAndAccountUpdates AccountAccess = "PHI_AND_ACCOUNT_UPDATES"
	AccountAccessUnspecified          AccountAccess = "UNSPECIFIED"
)

// SignerStatus is the state of a signer's authority.
type SignerStatus string

// The signer states.
const (
	SignerStatusActive   SignerStatus = "ACTIVE"
	SignerStatusInactive SignerStatus = "INACTIVE"
	SignerStatusPending  SignerStatus = "PENDING"
	SignerStatusArchived SignerStatus = "ARCHIVED"
)

// SignerType is the capacity in which a signer acts.
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

// Person is the answer of Get Person.
type Person struct {
	PersonID   string     `json:"person_id"`
	BusinessID string     `json:"business_id"`
	FirstName  string     `json:"first_name"`
	MiddleName string     `json:"middle_name,omitempty"`
	LastName   string     `json:"last_name"`
	Type       PersonType `json:"type"`
}

// AuthorizedSigner is one signer of a consumer: a person who may act on the
// consumer's behalf, and how far. AccountAccess, Status and Type are
// named string types, like Person.Type: compare them with the constants
// (or with untyped strings, s.Status == "ACTIVE"), and convert them
// (string(s.Status)) where a string is wanted. A value a later version of
// the service adds is kept as it is sent.
type AuthorizedSigner struct {
	FirstName       string        `json:"first_name"`
	MiddleName      string        `json:"middle_name,omitempty"`
	LastName        string        `json:"last_name"`
	HIPAAAuthorized bool          `json:"hipaa_authorized"`
	AccountAccess   AccountAccess `json:"account_access"`
	Status          SignerStatus  `json:"status"`
	Type            SignerType    `json:"type"`
	Address         *Address      `json:"address,omitempty"`
	Phone           *Phone        `json:"phone,omitempty"`
	Protected       *Protected    `json:"protected_personal_data,omitempty"`
}

// Address is a signer's postal address.
type Address struct {
	Line1   string `json:"line1"`
	Line2   string `json:"line2,omitempty"`
	City    string `json:"city"`
	State   string `json:"state"`
	ZipCode string `json:"zip_code"`
	Country string `json:"country"`
}

// Phone is a signer's telephone number.
type Phone struct {
	CountryCode string `json:"country_code"`
	AreaCode    string `json:"area_code"`
	Number      string `json:"number"`
	Extension   string `json:"extension,omitempty"`
}

// Protected is a signer's protected personal data, present only when the
// call asked for it (Expand). The SSN is shaped by the call's SSN mode
// and is "" when the mode is SSNNone or the service does not know it.
// Treat both values as the secrets they are: do not log them.
type Protected struct {
	SocialSecurityNumber string `json:"social_security_number,omitempty"`
	DateOfBirth          string `json:"date_of_birth,omitempty"` // YYYY-MM-DD
}

// Meta is what every answer says besides its body.
type Meta struct {
	// Position is the stream sequence the read model had applied when the
	// answer was read (Lookup-Position); 0 if the answer carried none.
	Position uint64
	// RequestID is the answer's X-Request-Id: the caller's, or the one the
	// service made.
	RequestID string
	// Attempts is how many requests the call sent (1 without a retry).
	Attempts int
}

// PersonResult is the answer of GetPerson.
type PersonResult struct {
	Person Person
	Meta   Meta
}

// SignersResult is the answer of AuthorizedSigners: every signer of the
// consumer, in the service's order (last name, first name, signer id).
type SignersResult struct {
	Items []AuthorizedSigner
	Meta  Meta
}
