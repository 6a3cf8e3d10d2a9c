package events

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSubject(t *testing.T) {
	up := strings.ToUpper
	tests := []struct {
		subject string
		want    Entity
		wantErr bool
	}{
		{SubjectPrefixConsumer + testConsumerID, Entity{Kind: KindConsumer, ID: testConsumerID, ConsumerID: testConsumerID}, false},
		{SubjectPrefixConsumer + up(testConsumerID), Entity{Kind: KindConsumer, ID: testConsumerID, ConsumerID: testConsumerID}, false},
		{SubjectPrefixBusinessContact + testContactID, Entity{Kind: KindBusinessContact, ID: testContactID}, false},
		{SubjectPrefixSigner + testConsumerID + "." + up(testSignerID), Entity{Kind: KindSigner, ID: testSignerID, ConsumerID: testConsumerID}, false},
		{"", Entity{}, true},
		{"persons", Entity{}, true},
		{SubjectPrefixConsumer, Entity{}, true},
		{SubjectPrefixConsumer + "c-1", Entity{}, true},
		{SubjectPrefixConsumer + testConsumerID + ".x", Entity{}, true},
		{"PERSONS.CONSUMER." + testConsumerID, Entity{}, true},
		{SubjectPrefixBusinessContact + testContactID + "." + testSignerID, Entity{}, true},
		{SubjectPrefixSigner + testConsumerID, Entity{}, true},
		{SubjectPrefixSigner + testConsumerID + "." + testSignerID + ".x", Entity{}, true},
		{SubjectPrefixSigner + "x." + testSignerID, Entity{}, true},
		{"dlq.persons.consumer." + testConsumerID, Entity{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.subject, func(t *testing.T) {
			got, err := ParseSubject(tt.subject)
			if tt.wantErr {
				var ie *InvalidEventError
				if !errors.As(err, &ie) || ie.Field != "subject" || ie.Reason == "" {
					t.Fatalf("ParseSubject(%q) = %+v, %v; want an InvalidEventError for subject", tt.subject, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSubject(%q) = %+v, %v; want %+v", tt.subject, got, err, tt.want)
			}
			if got.Subject() != strings.ToLower(tt.subject) {
				t.Errorf("Subject() = %q, want %q", got.Subject(), strings.ToLower(tt.subject))
			}
		})
	}
}
