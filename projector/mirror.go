package projector

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// mirrorGrace is how long a mirror may go without hearing from its origin
// and still count as in step. A mirror's consumer on the origin sends it a
// heartbeat every second when there is nothing else to send (nats-server,
// sourceHealthHB), and every message or heartbeat received resets the
// mirror's Active (jetstream.StreamSourceInfo.Active: the time since the
// mirror last heard from its origin); three missed heartbeats mean the link
// is down (the server itself retries its consumer after 10 s).
const mirrorGrace = 3 * time.Second

// mirrorLink is the state of the link between the mirror the projector
// reads and its origin, as last seen by observeMirror.
type mirrorLink struct {
	origin string // the stream mirrored; "" when the stream read is not a mirror
	// cutSince is since when the mirror has not been in step with its
	// origin (it last heard from it then, or first failed to); zero while
	// in step.
	cutSince time.Time
	lag      uint64 // the mirror's Lag as last reported
}

// observeMirror records, when the stream read is a mirror (info.Mirror),
// whether it is in step with its origin, and since when not.
//
// A mirror is in step when it has heard from its origin within
// mirrorGrace without an error, and has nothing left to copy: its Lag
// (the messages the origin still had for it when it last received one) is
// 0, or its last message is itself younger than mirrorGrace (under steady
// publishing the Lag of the last message received is rarely 0). A mirror
// out of step is cut off since it last heard from its origin (now minus
// Active), or since now when it has not heard from it since it started
// (Active -1); and it stays so, once cut off, until it is in step again,
// so that a mirror catching up after an outage (hearing, but copying a
// backlog) still reports the outage's start. The staleness bound reads it
// through Progress.UnreachableSince.
func (p *Projector) observeMirror(info *jetstream.StreamInfo, now time.Time) {
	if info == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	m := info.Mirror
	if m == nil {
		p.link = mirrorLink{}
		return
	}
	heard := m.Active >= 0 && m.Active <= mirrorGrace && m.Error == nil
	inStep := heard && (m.Lag == 0 || now.Sub(info.State.LastTime) <= mirrorGrace)
	l := &p.link
	was := l.cutSince
	l.origin, l.lag = m.Name, m.Lag
	switch {
	case inStep:
		l.cutSince = time.Time{}
	case !l.cutSince.IsZero(): // still out of step: since the first time seen
	case m.Active >= 0:
		l.cutSince = now.Add(-m.Active)
	default:
		l.cutSince = now
	}
	switch {
	case was.IsZero() && !l.cutSince.IsZero():
		var reason string
		if m.Error != nil {
			reason = m.Error.Error()
		}
		p.logger.Warn("the mirror is out of step with its origin; answers may be stale", "origin", m.Name,
			"since", l.cutSince, "mirror_lag", m.Lag, "mirror_active", m.Active, "mirror_error", reason)
	case !was.IsZero() && l.cutSince.IsZero():
		p.logger.Info("the mirror is in step with its origin again", "origin", m.Name, "out_of_step_for", now.Sub(was))
	}
}
