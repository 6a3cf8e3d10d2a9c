package projector

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// setReached records whether the last attempt to reach the stream
// succeeded, and since when it has been failing (Progress.UnreachableSince).
func (p *Projector) setReached(ok bool) {
	p.reached.Store(ok)
	if ok {
		p.unreachableSince.Store(0)
		return
	}
	p.unreachableSince.CompareAndSwap(0, time.Now().UnixNano())
}

// oldest is the first message of the stream not yet applied, as last
// looked up by observeOldest.
type oldest struct {
	seq  uint64
	time time.Time
}

// observeOldest looks up the timestamp of the first message after the
// checkpoint (messages may have been deleted: the first one at or after
// checkpoint + 1), when the stream holds messages beyond the checkpoint.
func (p *Projector) observeOldest(ctx context.Context, stream jetstream.Stream) {
	p.mu.Lock()
	applied, last := p.prog.AppliedSeq, p.prog.StreamLastSeq
	p.mu.Unlock()
	if last <= applied {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, p.cfg.RefreshInterval)
	defer cancel()
	msg, err := stream.GetMsg(rctx, applied+1, jetstream.WithGetMsgSubject(">"))
	if err != nil {
		return
	}
	p.mu.Lock()
	if msg.Sequence > p.oldest.seq {
		p.oldest = oldest{seq: msg.Sequence, time: msg.Time}
	}
	p.mu.Unlock()
}

// oldestUnapplied returns the timestamp of the oldest message known not to
// be applied (zero if none is known). Called with p.mu held.
func (p *Projector) oldestUnapplied() time.Time {
	if p.prog.StreamLastSeq > p.prog.AppliedSeq && p.oldest.seq > p.prog.AppliedSeq {
		return p.oldest.time
	}
	return time.Time{}
}

// observeVisible reports, for each event of a batch just committed, the
// time from its stream timestamp to now (Config.ObserveVisible).
func (p *Projector) observeVisible(items []item) {
	if p.cfg.ObserveVisible == nil {
		return
	}
	now := time.Now()
	for i := range items {
		if !items[i].time.IsZero() {
			p.cfg.ObserveVisible(now.Sub(items[i].time))
		}
	}
}
