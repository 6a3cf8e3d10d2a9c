package events

import (
	"regexp"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestEventsDocExample checks that the example of docs/events.md, the
// page upstream teams publish from, is a valid event on its subject with
// the message id it shows.
func TestEventsDocExample(t *testing.T) {
	doc := testkit.ReadRepoFile(t, "docs/events.md")
	subject := regexp.MustCompile("Subject `([^`]+)`").FindStringSubmatch(doc)
	msgID := regexp.MustCompile("header `Nats-Msg-Id: ([^`]+)`").FindStringSubmatch(doc)
	body := regexp.MustCompile("(?s)```json\n(.*?)```").FindStringSubmatch(doc)
	if subject == nil || msgID == nil || body == nil {
		t.Fatalf("docs/events.md lacks its example (subject %v, message id %v, JSON body %v)", subject != nil, msgID != nil, body != nil)
	}
	ev, err := Decode(subject[1], []byte(body[1]))
	if err != nil {
		t.Fatalf("the example of docs/events.md is invalid: %v", err)
	}
	if ev.ID != msgID[1] {
		t.Errorf("example id %q, but its Nats-Msg-Id is %q", ev.ID, msgID[1])
	}
	if s, ok := ev.Data.(Signer); !ok || s.SSN != "123456789" {
		t.Errorf("example data = %#v, want a signer with its SSN normalised", ev.Data)
	}
}
