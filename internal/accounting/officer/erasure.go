package officer

import (
	"context"
	"strconv"
	"time"

	"github.com/lookup/persons/internal/erasure"
)

// The person page's section "Erasure": what the erasure bucket's evidence
// says of the person's deletion (internal/erasure, Status from the
// evidence alone), per entity the id names: when it was deleted, each
// place it was kept in, what remains there and when it was cleared.

// erasureTimeout bounds the reading of the evidence, so that the page
// is answered (without the section) when NATS is slow.
const erasureTimeout = 5 * time.Second

// stampLayout is how the page writes a time.
const stampLayout = "2006-01-02 15:04:05 UTC"

// erasureSection is the section's data; nil in pageData: not shown.
type erasureSection struct {
	Failed   bool // the evidence could not be read
	Entities []erasureEntity
}

// erasureEntity is the erasure of one entity, in words.
type erasureEntity struct {
	What, ID    string // "Consumer", "Authorized signer of consumer …"
	Deleted     bool
	DeletedAt   string
	DeletionSeq uint64
	ErasedWith  string // the consumer whose deletion erased this signer
	Places      []erasurePlace
	Complete    bool
	CompletedAt string
}

// erasurePlace is one place the entity was kept.
type erasurePlace struct{ Place, Name, Remains, At string }

// erasure returns the section of person's erasure; nil when the page has
// none (Config.Erasure nil). A failure is logged and shown as one.
func (o *officer) erasure(ctx context.Context, person string) *erasureSection {
	if o.Erasure == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, erasureTimeout)
	defer cancel()
	rep, err := o.Erasure(ctx, person)
	if err != nil {
		o.Logger.Error("the erasure's evidence could not be read; the officer's page says so", "err", err)
		return &erasureSection{Failed: true}
	}
	s := &erasureSection{}
	for _, e := range rep.Entities {
		w := erasureEntity{What: entityWhat(e), ID: e.ID, Deleted: e.Deleted, DeletionSeq: e.DeletionSeq,
			DeletedAt: stamp(e.DeletedAt), ErasedWith: e.ErasedWith, Complete: e.Complete, CompletedAt: stamp(e.CompletedAt)}
		for _, p := range e.Places {
			w.Places = append(w.Places, erasurePlace{Place: placeWhat(p.Place), Name: p.Name, Remains: remains(p.Remains), At: stamp(p.At)})
		}
		s.Entities = append(s.Entities, w)
	}
	return s
}

// entityWhat names the kind of e in words.
func entityWhat(e erasure.EntityStatus) string {
	switch e.Kind {
	case "consumer":
		return "Consumer"
	case "business_contact":
		return "Business contact"
	case "authorized_signer":
		if e.ConsumerID != "" {
			return "Authorized signer of consumer " + e.ConsumerID
		}
		return "Authorized signer"
	}
	return e.Kind
}

// placeWhat names a place of erasure.Place in words.
func placeWhat(place string) string {
	switch place {
	case "stream":
		return "Event stream"
	case "dead_letters":
		return "Dead letters"
	case "snapshots":
		return "Snapshots"
	case "replica":
		return "Replica's files"
	}
	return place
}

// remains says what remains in a place: nothing, a count, or not yet
// cleared (-1).
func remains(n int) string {
	switch {
	case n == 0:
		return "nothing"
	case n < 0:
		return "not yet cleared"
	}
	return strconv.Itoa(n)
}

// stamp is t as the page writes times; "" when zero.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(stampLayout)
}
