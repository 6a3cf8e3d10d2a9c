package loadtest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/repofile"
)

// TestPersonsStreamIsDeployed: the soak's stream is the deployed one.
func TestPersonsStreamIsDeployed(t *testing.T) {
	var want jetstream.StreamConfig
	if err := json.Unmarshal([]byte(repofile.Read(t, "deploy/streams/persons.json")), &want); err != nil {
		t.Fatal(err)
	}
	if got := PersonsStream(want.Name); !reflect.DeepEqual(got, want) {
		t.Errorf("PersonsStream = %+v\nwant deploy/streams/persons.json = %+v", got, want)
	}
}
