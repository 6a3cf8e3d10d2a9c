package testkit

import (
	"testing"
)

func TestRunConnectStream(t *testing.T) {
	s := RunNATS(t, nil)
	_, js := ConnectNATS(t, s.ClientURL())
	PersonsStream(t, js)
	ack, err := js.Publish(t.Context(), "persons.test", []byte("x"))
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	if ack.Stream != "PERSONS" || ack.Sequence != 1 {
		t.Fatalf("got ack %+v, want stream PERSONS sequence 1", ack)
	}
}
