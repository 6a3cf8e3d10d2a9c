package client

import (
	"context"
	"sync/atomic"
)

// A Session reads its own writes and never goes back in time: it
// remembers the highest stream position it has seen, from a publish
// (Observe) or from an answer (Lookup-Position), and asks every later read
// for at least that position (Lookup-Min-Position). A replica that has not
// applied it yet waits, then answers 503 position-not-reached, which the
// client retries as it retries any 503 with Retry-After.
//
// Use one Session per unit of causality (a user's request, a workflow),
// not one for the whole process: a session's position only rises, so one
// shared by unrelated work makes each read wait for all the others'
// writes. A Session is safe for concurrent use.
type Session struct {
	c   *Client
	pos atomic.Uint64
}

// Session returns a new Session over c, at position 0.
func (c *Client) Session() *Session { return &Session{c: c} }

// Observe raises the session's position to seq, the stream sequence a
// publish returned (events.Publisher.Publish) or that another service
// handed over. A lower seq changes nothing.
func (s *Session) Observe(seq uint64) {
	for {
		cur := s.pos.Load()
		if seq <= cur || s.pos.CompareAndSwap(cur, seq) {
			return
		}
	}
}

// Position is the highest position the session has seen.
func (s *Session) Position() uint64 { return s.pos.Load() }

// GetPerson is Client.GetPerson at the session's position or later.
func (s *Session) GetPerson(ctx context.Context, id string, opts ...CallOption) (*PersonResult, error) {
	return s.c.getPerson(ctx, id, s, opts)
}

// AuthorizedSigners is Client.AuthorizedSigners at the session's position
// or later.
func (s *Session) AuthorizedSigners(ctx context.Context, consumerID string, opts ...CallOption) (*SignersResult, error) {
	return s.c.authorizedSigners(ctx, consumerID, s, opts)
}
