package loadtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// RTTPayload is the size of the message MeasureBrokerRTT publishes:
// about one audit record.
const RTTPayload = 256

// rttWarmup is how many publishes and pings MeasureBrokerRTT makes before it
// times any.
const rttWarmup = 10

// BrokerRTT is the broker's round trip, the median of n of each.
type BrokerRTT struct {
	// PublishAck is a JetStream publish of a small message to a stream
	// stored in files (as the audit stream is) until its acknowledgement:
	// what the audit ledger waits for before a lone answer goes out.
	PublishAck time.Duration
	// Ping is a core NATS round trip (nats.Conn.RTT): no storage.
	Ping time.Duration
	N    int
}

// MeasureBrokerRTT measures the round trips of the NATS server at url, n
// of each one at a time after a few untimed, publishing to a scratch
// stream named stream (subject loadtest.rtt.<stream>) that it creates and
// deletes.
func MeasureBrokerRTT(ctx context.Context, url, stream string, n int) (_ BrokerRTT, err error) {
	if n < 1 {
		return BrokerRTT{}, errors.New("broker round trip: n must be at least 1")
	}
	nc, err := nats.Connect(url, nats.Name("lookupd-loadtest-rtt"))
	if err != nil {
		return BrokerRTT{}, fmt.Errorf("broker round trip: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return BrokerRTT{}, err
	}
	subject := "loadtest.rtt." + stream
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{subject},
		Storage: jetstream.FileStorage, Compression: jetstream.S2Compression, Replicas: 1, MaxMsgs: int64(n + rttWarmup)})
	if err != nil {
		return BrokerRTT{}, fmt.Errorf("broker round trip: scratch stream %s: %w", stream, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if derr := js.DeleteStream(dctx, stream); derr != nil && err == nil {
			err = fmt.Errorf("broker round trip: delete the scratch stream %s: %w", stream, derr)
		}
	}()
	data := make([]byte, RTTPayload)
	acks, pings := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	for i := range n + rttWarmup {
		start := time.Now()
		if _, err := js.Publish(ctx, subject, data); err != nil {
			return BrokerRTT{}, fmt.Errorf("broker round trip: publish: %w", err)
		}
		ack := time.Since(start)
		ping, err := nc.RTT()
		if err != nil {
			return BrokerRTT{}, fmt.Errorf("broker round trip: ping: %w", err)
		}
		if i >= rttWarmup {
			acks, pings = append(acks, ack), append(pings, ping)
		}
	}
	return BrokerRTT{PublishAck: medianDuration(acks), Ping: medianDuration(pings), N: n}, nil
}

// medianDuration returns the median of ds (the upper one of an even
// count), 0 for none.
func medianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
