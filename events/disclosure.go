package events

// Disclosure is one answer of the API that discloses protected personal
// data (an SSN, whole or in part, or a date of birth): what the API hands
// the audit ledger before it sends the answer (query.Auditor), and what
// the ledger's records are made of. It never holds the data itself, nor
// the token.
type Disclosure struct {
	RequestID string
	Subject   string   // the token's sub
	Client    string   // the token's azp, else client_id
	Tenants   []string // the tenancy claim's business ids; nil when tenancy is off
	Operation string   // OpenAPI operationId
	Purpose   string   // Lookup-Purpose header; "" when not given
	// Requested is the date (YYYY-MM-DD) of the person's request that an
	// accounting of disclosures given to them answers ("" for the API's
	// disclosures, which never set it).
	Requested string
	Persons   []DisclosedPerson
}

// DisclosedPerson is one person whose protected data an answer holds.
type DisclosedPerson struct {
	ID      string // for a signer, the signer's id
	SSNMode string // the ssn_mode of the SSN disclosed; "" when none was
	DOB     bool   // whether the date of birth was disclosed
}
