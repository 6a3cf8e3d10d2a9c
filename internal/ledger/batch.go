package ledger

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
)

// fastBatches is the client side of JetStream fast batch publishing (a
// stream with allow_batched; nats-server's ADR-50): the messages of a
// batch go out without waiting, each names its batch and its place in it
// in its reply subject, and the server answers on those subjects. A
// Ledger's batches ask for gap mode "fail" and a flow acknowledgement per
// message: the server persists a batch's messages in order and stops at
// the first one lost or refused (every later one is refused too), and an
// acknowledgement of batch sequence n says that messages 1..n are stored.
type fastBatches struct {
	nc      *nats.Conn
	inbox   string
	replies chan *nats.Msg
	sub     *nats.Subscription
}

// The operations of a fast batch message (the server's FastBatchOp*).
const (
	opStart     = 0 // first message
	opAppend    = 1
	opCommit    = 2 // last message, stored (a Ledger ends its batches with opCommitEOB)
	opCommitEOB = 3 // end the batch without storing this message
	opPing      = 4 // ask for the batch's state; stores nothing
)

func newFastBatches(nc *nats.Conn) (*fastBatches, error) {
	// nc.NewInbox, not nats.NewInbox: the connection's inbox prefix is the
	// only reply subject a least-privilege user may subscribe to.
	fb := &fastBatches{nc: nc, inbox: nc.NewInbox(), replies: make(chan *nats.Msg, 256)}
	sub, err := nc.ChanSubscribe(fb.inbox+".>", fb.replies)
	if err != nil {
		return nil, fmt.Errorf("audit: subscribe to batch replies: %w", err)
	}
	fb.sub = sub
	return fb, nil
}

func (fb *fastBatches) close() {
	if fb != nil && fb.sub != nil {
		_ = fb.sub.Unsubscribe()
	}
}

// batch is one fast batch: its id and the batch sequence of the last
// message sent in it.
type batch struct {
	id     string
	prefix string // of its reply subjects
	seq    uint64
}

func (fb *fastBatches) newBatch() *batch {
	id := strings.ReplaceAll(uuid.NewString(), "-", "")
	return &batch{id: id, prefix: fb.inbox + "." + id + "."}
}

// reply returns the reply subject of the message seq of b with operation
// op: <inbox>.<batch id>.<flow>.<gap mode>.<seq>.<op>.$FI, with flow 1
// (an acknowledgement per message) and gap mode fail.
func (b *batch) reply(seq uint64, op int) string {
	return b.prefix + "1.fail." + strconv.FormatUint(seq, 10) + "." + strconv.Itoa(op) + ".$FI"
}

// owns reports whether the server's answer r is about b.
func (b *batch) owns(r *nats.Msg) bool { return b != nil && strings.HasPrefix(r.Subject, b.prefix) }

// batchReply is any answer of the server to a fast batch message: a flow
// acknowledgement ("ack": messages up to Seq are stored), a gap ("gap":
// messages from LastSeq on were lost), an error ("err": message Seq was
// refused), or the PubAck that ends the batch (Stream set: Count messages
// stored, the last at stream sequence Seq; or Error).
type batchReply struct {
	Type    string    `json:"type"`
	Seq     uint64    `json:"seq"`
	LastSeq uint64    `json:"last_seq"`
	Stream  string    `json:"stream"`
	Batch   string    `json:"batch"`
	Count   uint64    `json:"count"`
	Error   *apiError `json:"error"`
}

// apiError is a JetStream API error.
type apiError struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code"`
	Description string `json:"description"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s (%d, err_code %d)", e.Description, e.Code, e.ErrCode)
}

// parseBatchReply decodes the server's answer r.
func parseBatchReply(r *nats.Msg) (batchReply, error) {
	var rep batchReply
	if r.Header.Get("Status") == "503" {
		return rep, nats.ErrNoResponders // no stream takes the subject
	}
	if err := json.Unmarshal(r.Data, &rep); err != nil {
		return rep, fmt.Errorf("audit: batch answer %q: %w", r.Data, err)
	}
	return rep, nil
}

// pubAck reports whether rep is the PubAck that ends a batch.
func (rep *batchReply) pubAck() bool {
	return rep.Type == "" && (rep.Stream != "" || rep.Error != nil)
}
