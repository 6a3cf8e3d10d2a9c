package events

import (
	"bytes"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// field is where the value of a data field goes: a string s; a boolean b,
// with set recording that it was given; or a nested object, address or
// phone, allocated when given, whose fields are named after path.
type field struct {
	s     *string
	b     *bool
	set   *bool
	addr  **Address
	phone **Phone
	path  string
}

// fielder finds the field of a data object with a given name; the zero
// field for names it does not know, whose values are ignored.
type fielder interface{ field(name []byte) field }

// dataReader reads data objects without reflection. It is pooled: a
// jsontext.Decoder is large.
type dataReader struct {
	dec jsontext.Decoder
	buf bytes.Buffer
}

var dataReaders = sync.Pool{New: func() any { return new(dataReader) }}

// readFields reads data, a JSON object whose syntax and names have been
// checked already, into the fields of f: names matched exactly, unknown
// names ignored, null as absent, strings unescaped with invalid UTF-8 read
// as U+FFFD. It returns the first value of a wrong JSON type, in body order,
// as an *InvalidEventError, as json.Unmarshal into the data types would.
func readFields(data []byte, f fielder) error {
	r := dataReaders.Get().(*dataReader)
	defer func() {
		r.buf.Reset()
		r.dec.Reset(&r.buf) // drop data
		dataReaders.Put(r)
	}()
	r.buf.Reset()
	r.buf.Write(data)
	r.dec.Reset(&r.buf, dataOptions...)
	var fault error
	if err := readObject(&r.dec, "data.", f, &fault); err != nil {
		return jsonFault(err, "data.")
	}
	return fault
}

// readObject reads the object at dec into f; the fields of path prefix. A
// value of a wrong JSON type is skipped, the first one recorded in *fault.
func readObject(dec *jsontext.Decoder, prefix string, f fielder, fault *error) error {
	if _, err := dec.ReadToken(); err != nil { // '{'
		return err
	}
	for dec.PeekKind() != '}' {
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		name := raw[1 : len(raw)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			name, _ = jsontext.AppendUnquote(nil, raw) // invalid UTF-8 as U+FFFD
		}
		fl := f.field(name)
		k := dec.PeekKind()
		var want string
		switch {
		case fl == field{}:
			err = dec.SkipValue()
		case k == 'n':
			_, err = dec.ReadToken()
		case fl.s != nil && k == '"':
			var t jsontext.Token
			if t, err = dec.ReadToken(); err == nil {
				*fl.s = t.String()
			}
		case fl.b != nil && (k == 't' || k == 'f'):
			*fl.b, *fl.set = k == 't', true
			_, err = dec.ReadToken()
		case fl.addr != nil && k == '{':
			*fl.addr = new(Address)
			err = readObject(dec, fl.path, *fl.addr, fault)
		case fl.phone != nil && k == '{':
			*fl.phone = new(Phone)
			err = readObject(dec, fl.path, *fl.phone, fault)
		case fl.s != nil:
			want = "string"
		case fl.b != nil:
			want = "boolean"
		default:
			want = "object"
		}
		if want != "" {
			if *fault == nil {
				*fault = &InvalidEventError{Field: prefix + string(name), Reason: "wrong JSON type: got " + kindName(k) + ", want " + want}
			}
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	_, err := dec.ReadToken() // '}'
	return err
}

// nameField returns the field of a person's name part called name (first,
// middle or last), of the strings given; none if name is not one.
func nameField(name string, first, middle, last *string) field {
	switch name {
	case "first_name":
		return field{s: first}
	case "middle_name":
		return field{s: middle}
	case "last_name":
		return field{s: last}
	}
	return field{}
}

func (c *Consumer) field(name []byte) field {
	switch string(name) {
	case "consumer_id":
		return field{s: &c.ConsumerID}
	case "business_id":
		return field{s: &c.BusinessID}
	}
	return nameField(string(name), &c.FirstName, &c.MiddleName, &c.LastName)
}

func (c *BusinessContact) field(name []byte) field {
	switch string(name) {
	case "contact_id":
		return field{s: &c.ContactID}
	case "business_id":
		return field{s: &c.BusinessID}
	}
	return nameField(string(name), &c.FirstName, &c.MiddleName, &c.LastName)
}

func (c *ConsumerDeleted) field(name []byte) field {
	if string(name) == "consumer_id" {
		return field{s: &c.ConsumerID}
	}
	return field{}
}

func (c *BusinessContactDeleted) field(name []byte) field {
	if string(name) == "contact_id" {
		return field{s: &c.ContactID}
	}
	return field{}
}

func (s *SignerDeleted) field(name []byte) field {
	switch string(name) {
	case "signer_id":
		return field{s: &s.SignerID}
	case "consumer_id":
		return field{s: &s.ConsumerID}
	}
	return field{}
}

func (s *signerData) field(name []byte) field {
	switch string(name) {
	case "signer_id":
		return field{s: &s.SignerID}
	case "consumer_id":
		return field{s: &s.ConsumerID}
	case "hipaa_authorized":
		return field{b: &s.HIPAAAuthorized, set: &s.hipaaSet}
	case "account_access":
		return field{s: (*string)(&s.AccountAccess)}
	case "status":
		return field{s: (*string)(&s.Status)}
	case "type":
		return field{s: (*string)(&s.Type)}
	case "address":
		return field{addr: &s.Address, path: "data.address."}
	case "phone":
		return field{phone: &s.Phone, path: "data.phone."}
	case "social_security_number":
		return field{s: &s.SSN}
	case "date_of_birth":
		return field{s: &s.DateOfBirth}
	}
	return nameField(string(name), &s.FirstName, &s.MiddleName, &s.LastName)
}

func (a *Address) field(name []byte) field {
	switch string(name) {
	case "line1":
		return field{s: &a.Line1}
	case "line2":
		return field{s: &a.Line2}
	case "city":
		return field{s: &a.City}
	case "state":
		return field{s: &a.State}
	case "zip_code":
		return field{s: &a.ZipCode}
	case "country":
		return field{s: &a.Country}
	}
	return field{}
}

func (p *Phone) field(name []byte) field {
	switch string(name) {
	case "country_code":
		return field{s: &p.CountryCode}
	case "area_code":
		return field{s: &p.AreaCode}
	case "number":
		return field{s: &p.Number}
	case "extension":
		return field{s: &p.Extension}
	}
	return field{}
}
