package events

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// signerData is the data of a signer upsert as read: hipaaSet tells a
// missing hipaa_authorized from false.
type signerData struct {
	Signer
	hipaaSet bool
}

// decodeData reads data, the data object of an event of type t, and
// returns it, validated, as the data type of t. It reports the first value
// of a wrong JSON type, in body order, before other faults.
func decodeData(t Type, data []byte) (any, error) {
	switch t {
	case TypeConsumerUpserted:
		return readData(data, (*Consumer).validate)
	case TypeConsumerDeleted:
		return readData(data, (*ConsumerDeleted).validate)
	case TypeBusinessContactUpserted:
		return readData(data, (*BusinessContact).validate)
	case TypeBusinessContactDeleted:
		return readData(data, (*BusinessContactDeleted).validate)
	case TypeSignerUpserted:
		s, err := readData(data, (*signerData).validate)
		return s.Signer, err
	case TypeSignerDeleted:
		return readData(data, (*SignerDeleted).validate)
	}
	return nil, &InvalidEventError{Field: "type", Reason: "unknown event type"} // not reached: t is one of Types
}

// dataTarget returns a new value for the data of an event of type t to be
// read into (see readFields), and checked by checkData.
func dataTarget(t Type) fielder {
	switch t {
	case TypeConsumerUpserted:
		return new(Consumer)
	case TypeConsumerDeleted:
		return new(ConsumerDeleted)
	case TypeBusinessContactUpserted:
		return new(BusinessContact)
	case TypeBusinessContactDeleted:
		return new(BusinessContactDeleted)
	case TypeSignerUpserted:
		return new(signerData)
	}
	return new(SignerDeleted)
}

// checkData returns the data that v, from dataTarget, holds, once valid:
// fault first (a value of a wrong JSON type met while reading it), then the
// checks of its type.
func checkData(v fielder, fault error) (any, error) {
	if fault != nil {
		return nil, fault
	}
	if err := v.(interface{ validate() error }).validate(); err != nil {
		return nil, err
	}
	switch d := v.(type) {
	case *Consumer:
		return *d, nil
	case *ConsumerDeleted:
		return *d, nil
	case *BusinessContact:
		return *d, nil
	case *BusinessContactDeleted:
		return *d, nil
	case *signerData:
		return d.Signer, nil
	case *SignerDeleted:
		return *d, nil
	}
	return nil, &InvalidEventError{Field: "type", Reason: "unknown event type"} // not reached
}

// readData reads data into a T (unknown names ignored, null as absent) and
// checks it with check.
func readData[T any, PT interface {
	*T
	fielder
}](data []byte, check func(PT) error) (T, error) {
	var v T
	if err := readFields(data, PT(&v)); err != nil {
		return v, err
	}
	err := check(&v) // before v is returned: check normalises it
	return v, err
}

func (c *Consumer) validate() error {
	return checkPerson(&c.ConsumerID, "consumer_id", &c.BusinessID, c.FirstName, c.LastName)
}

func (c *BusinessContact) validate() error {
	return checkPerson(&c.ContactID, "contact_id", &c.BusinessID, c.FirstName, c.LastName)
}

// checkPerson checks (and normalises) the fields that a consumer and a
// business contact share: the person's id (the field idField), its
// business_id and its names, in that order.
func checkPerson(id *string, idField string, businessID *string, first, last string) error {
	if err := checkID(id, idField); err != nil {
		return err
	}
	if err := checkID(businessID, "business_id"); err != nil {
		return err
	}
	return checkNames(first, last)
}

func (c *ConsumerDeleted) validate() error { return checkID(&c.ConsumerID, "consumer_id") }

func (c *BusinessContactDeleted) validate() error { return checkID(&c.ContactID, "contact_id") }

func (s *SignerDeleted) validate() error {
	if err := checkID(&s.SignerID, "signer_id"); err != nil {
		return err
	}
	return checkID(&s.ConsumerID, "consumer_id")
}

func (s *signerData) validate() error {
	if err := checkID(&s.SignerID, "signer_id"); err != nil {
		return err
	}
	if err := checkID(&s.ConsumerID, "consumer_id"); err != nil {
		return err
	}
	if err := checkNames(s.FirstName, s.LastName); err != nil {
		return err
	}
	if !s.hipaaSet {
		return &InvalidEventError{Field: "data.hipaa_authorized", Reason: "is required"}
	}
	if err := checkEnum("account_access", string(s.AccountAccess), s.AccountAccess.Valid()); err != nil {
		return err
	}
	if err := checkEnum("status", string(s.Status), s.Status.Valid()); err != nil {
		return err
	}
	if err := checkEnum("type", string(s.Type), s.Type.Valid()); err != nil {
		return err
	}
	if a := s.Address; a != nil {
		if err := a.validate(); err != nil {
			return err
		}
	}
	if p := s.Phone; p != nil {
		if err := p.validate(); err != nil {
			return err
		}
	}
	if s.SSN != "" {
		ssn, ok := NormalizeSSN(s.SSN)
		if !ok {
			return &InvalidEventError{Field: "data.social_security_number", Reason: "must be 9 digits, written 123456789 or 123-45-6789"}
		}
		s.SSN = ssn
	}
	if s.DateOfBirth != "" {
		if reason := checkDateOfBirth(s.DateOfBirth); reason != "" {
			return &InvalidEventError{Field: "data.date_of_birth", Reason: reason}
		}
	}
	return nil
}

func checkNames(first, last string) error {
	if first == "" {
		return &InvalidEventError{Field: "data.first_name", Reason: "is required"}
	}
	if last == "" {
		return &InvalidEventError{Field: "data.last_name", Reason: "is required"}
	}
	return nil
}

func (a *Address) validate() error {
	for _, f := range [...]struct{ name, v string }{
		{"line1", a.Line1}, {"city", a.City}, {"state", a.State}, {"zip_code", a.ZipCode}, {"country", a.Country},
	} {
		if f.v == "" {
			return &InvalidEventError{Field: "data.address." + f.name, Reason: "is required"}
		}
	}
	return nil
}

func (p *Phone) validate() error {
	for _, f := range [...]struct{ name, v string }{
		{"country_code", p.CountryCode}, {"area_code", p.AreaCode}, {"number", p.Number},
	} {
		if f.v == "" {
			return &InvalidEventError{Field: "data.phone." + f.name, Reason: "is required"}
		}
	}
	return nil
}

// checkEnum checks the value v of the enum data field name; valid tells
// whether v is one of its values.
func checkEnum(name, v string, valid bool) error {
	if v == "" {
		return &InvalidEventError{Field: "data." + name, Reason: "is required"}
	}
	if !valid {
		return &InvalidEventError{Field: "data." + name, Reason: "unknown value " + quote(v)}
	}
	return nil
}

// checkID lower-cases *id, the id data field name, if it is a canonical
// UUID, and otherwise returns an *InvalidEventError.
func checkID(id *string, name string) error {
	if *id == "" {
		return &InvalidEventError{Field: "data." + name, Reason: "is required"}
	}
	norm, ok := NormalizeID(*id)
	if !ok {
		return &InvalidEventError{Field: "data." + name, Reason: "must be a UUID written 8-4-4-4-12 hex digits, got " + quote(*id)}
	}
	*id = norm
	return nil
}

// ValidUUID reports whether s is a UUID in canonical form: 36 characters,
// hex digits of any case in groups of 8-4-4-4-12 separated by '-'. Other
// forms (urn:uuid:, braces, no dashes) are not valid. The version and
// variant bits are not checked.
func ValidUUID(s string) bool { return len(s) == 36 && uuid.Validate(s) == nil }

// NormalizeID returns the id s lower-case, the form ids take in events,
// in the read model and in the API's answers, and whether s is a UUID in
// canonical form (ValidUUID): ids are compared case-insensitively. It is
// the one check of an id, for data fields, the API's person_id and
// consumer_id, and the command line.
func NormalizeID(s string) (string, bool) {
	if !ValidUUID(s) {
		return "", false
	}
	return strings.ToLower(s), true
}

// NormalizeSSN returns the 9 digits of a social security number written
// either 123456789 or 123-45-6789, and whether s was one of those forms.
func NormalizeSSN(s string) (string, bool) {
	switch len(s) {
	case 9:
		if !allDigits(s) {
			return "", false
		}
		return s, true
	case 11:
		if s[3] != '-' || s[6] != '-' || !allDigits(s[:3]) || !allDigits(s[4:6]) || !allDigits(s[7:]) {
			return "", false
		}
		return s[:3] + s[4:6] + s[7:], true
	}
	return "", false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkDateOfBirth returns "" if s is a YYYY-MM-DD calendar date, else the
// reason it is not (which never quotes s). It does not look at the clock.
func checkDateOfBirth(s string) string {
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return "must be a calendar date written YYYY-MM-DD"
	}
	return ""
}
