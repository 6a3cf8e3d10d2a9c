package projector

import (
	"time"

	"github.com/lookup/persons/events"
)

// A Deletion is a deletion event the projector applied.
type Deletion struct {
	Seq    uint64        // stream sequence of the deletion event
	Time   time.Time     // the event's stream time
	Entity events.Entity // Kind, ID, ConsumerID
}
