package events

import "strings"

// ParseSubject returns the entity that a subject of the v1 contract names
// (persons.consumer.<consumer_id>, persons.business_contact.<contact_id> or
// persons.authorized_signer.<consumer_id>.<signer_id>), with its ids
// lower-cased. It returns an *InvalidEventError for Field "subject" if
// subject is not of one of these forms with canonical UUIDs.
//
// Decode does not need it (it compares the subject with the ids in data);
// it serves code that must place a message that did not decode, such as a
// dead-letter copy.
func ParseSubject(subject string) (Entity, error) {
	bad := func(why string) (Entity, error) {
		return Entity{}, &InvalidEventError{Field: "subject", Reason: quote(subject) + " " + why}
	}
	if rest, ok := strings.CutPrefix(subject, SubjectPrefixConsumer); ok {
		if !ValidUUID(rest) {
			return bad("does not end in a consumer id (UUID)")
		}
		id := strings.ToLower(rest)
		return Entity{Kind: KindConsumer, ID: id, ConsumerID: id}, nil
	}
	if rest, ok := strings.CutPrefix(subject, SubjectPrefixBusinessContact); ok {
		if !ValidUUID(rest) {
			return bad("does not end in a contact id (UUID)")
		}
		return Entity{Kind: KindBusinessContact, ID: strings.ToLower(rest)}, nil
	}
	if rest, ok := strings.CutPrefix(subject, SubjectPrefixSigner); ok {
		consumer, signer, found := strings.Cut(rest, ".")
		if !found || !ValidUUID(consumer) || !ValidUUID(signer) {
			return bad("does not end in <consumer_id>.<signer_id> (UUIDs)")
		}
		return Entity{Kind: KindSigner, ID: strings.ToLower(signer), ConsumerID: strings.ToLower(consumer)}, nil
	}
	return bad("is not a subject of the v1 contract")
}
