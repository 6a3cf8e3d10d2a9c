package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
)

// fastBatches stores batches of records with JetStream fast batch
// publishing (a stream with allow_batched): the records of a batch go out
// without a reply each, and one acknowledgement at the commit says how
// many were persisted. With gap mode "fail" the server persists them in
// order and stops at the first one lost or refused, so a PubAck counting
// every record of the batch proves that all are stored; anything else (an
// error, a gap, a short count, no answer in time) is a failure.
type fastBatches struct {
	nc      *nats.Conn
	inbox   string
	replies chan *nats.Msg
	sub     *nats.Subscription
}

// fastBatchFlow asks the server for a flow acknowledgement every so many
// records: more than a batch holds, so that only the first record's and
// the commit's are sent.
const fastBatchFlow = 2 * maxBatch

func newFastBatches(nc *nats.Conn) (*fastBatches, error) {
	// nc.NewInbox, not nats.NewInbox: the connection's inbox prefix is the
	// only reply subject a least-privilege user may subscribe to.
	fb := &fastBatches{nc: nc, inbox: nc.NewInbox(), replies: make(chan *nats.Msg, 64)}
	sub, err := nc.ChanSubscribe(fb.inbox+".>", fb.replies)
	if err != nil {
		return nil, fmt.Errorf("audit: subscribe to batch replies: %w", err)
	}
	fb.sub = sub
	return fb, nil
}

// batchReply is any answer of the server to a fast batch: a flow ack
// ("ack"), a gap ("gap"), an error ("err", or an API error), or the PubAck
// of the commit (with batch and count).
type batchReply struct {
	Type  string `json:"type"`
	Batch string `json:"batch"`
	Count int    `json:"count"`
	Error *struct {
		Code        int    `json:"code"`
		Description string `json:"description"`
	} `json:"error"`
}

// store publishes msgs as one fast batch and waits for its PubAck.
func (fb *fastBatches) store(ctx context.Context, msgs []*nats.Msg) error {
	id := strings.ReplaceAll(uuid.NewString(), "-", "")
	prefix := fb.inbox + "." + id + "."
	flow := strconv.Itoa(fastBatchFlow) + ".fail."
	for i, m := range msgs {
		op := 1 // append
		switch {
		case i == len(msgs)-1:
			op = 2 // commit
		case i == 0:
			op = 0 // start
		}
		m.Reply = prefix + flow + strconv.Itoa(i+1) + "." + strconv.Itoa(op) + ".$FI"
		if err := fb.nc.PublishMsg(m); err != nil {
			return fmt.Errorf("audit: publish: %w", err)
		}
	}
	for {
		select {
		case r := <-fb.replies:
			if !strings.HasPrefix(r.Subject, prefix) {
				continue // an answer to an earlier batch, given up on
			}
			if r.Header.Get("Status") == "503" {
				return nats.ErrNoResponders // no stream takes the subject
			}
			var rep batchReply
			if err := json.Unmarshal(r.Data, &rep); err != nil {
				return fmt.Errorf("audit: batch answer %q: %w", r.Data, err)
			}
			switch {
			case rep.Error != nil:
				return fmt.Errorf("audit: batch refused: %s (%d)", rep.Error.Description, rep.Error.Code)
			case rep.Type == "gap" || rep.Type == "err":
				return fmt.Errorf("audit: batch %s: %s", rep.Type, r.Data)
			case rep.Batch == id && rep.Count == len(msgs):
				return nil
			case rep.Batch == id:
				return fmt.Errorf("audit: batch stored %d of %d records", rep.Count, len(msgs))
			}
		case <-ctx.Done():
			return fmt.Errorf("audit: batch of %d records unacknowledged: %w", len(msgs), ctx.Err())
		}
	}
}

func (fb *fastBatches) close() {
	if fb != nil && fb.sub != nil {
		_ = fb.sub.Unsubscribe()
	}
}
