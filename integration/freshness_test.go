//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lookup/persons/events"
)

// TestReadYourWrites: a caller that publishes through events.Publisher and
// then reads with Lookup-Min-Position set to the returned sequence gets
// its own write, 1,000 times in a row, while other events stream in. Then
// NATS is stopped for 10 s: an event published once it is back is visible
// within 2 s.
func TestReadYourWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nw, nn, js := singleNATS(ctx, t)
	is := newIssuer(t)
	ld := startLookupd(ctx, t, lookupdConfig{network: nw, natsURL: "nats://nats:4222",
		volume: "lookupd-ryw-" + uuid.NewString(), jwks: is.jwks})
	ld.waitReady(t)
	tok := is.token(t, "read:persons", time.Hour)
	pub := events.NewPublisher(js)
	business, id := uuid.NewString(), uuid.NewString()

	// A steady background load of other consumers.
	bctx, stopLoad := context.WithCancel(ctx)
	var background atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for bctx.Err() == nil {
			ev, err := events.NewEvent(testSource, 1, events.Consumer{ConsumerID: uuid.NewString(), BusinessID: business, FirstName: "Bg", LastName: "Load"})
			if err == nil {
				if _, err := pub.Publish(bctx, ev); err == nil {
					background.Add(1)
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	for i := range 1000 {
		name := "N" + strconv.Itoa(i)
		ev, err := events.NewEvent(testSource, uint64(i+1), events.Consumer{ConsumerID: id, BusinessID: business, FirstName: name, LastName: "Mine"})
		if err != nil {
			t.Fatal(err)
		}
		seq, err := pub.Publish(ctx, ev)
		if err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		status, first, pos, err := getAtPosition(ld.api+"/api/v1/persons/"+id, tok, seq)
		if err != nil || status != http.StatusOK || first != name {
			t.Fatalf("read %d after publishing sequence %d: %d first_name %q (Lookup-Position %s), %v; want 200 %q", i, seq, status, first, pos, err, name)
		}
	}
	stopLoad()
	<-done
	t.Logf("1,000 reads of the caller's own writes, with %d other events published meanwhile", background.Load())

	// A 10 s outage (the duration under test), then a write once NATS is back.
	nn.stop(ctx, t)
	time.Sleep(10 * time.Second)
	nn.start(ctx, t)
	back := time.Now()
	ev, err := events.NewEvent(testSource, 1001, events.Consumer{ConsumerID: id, BusinessID: business, FirstName: "After", LastName: "Outage"})
	if err != nil {
		t.Fatal(err)
	}
	var seq uint64
	eventually(t, 30*time.Second, "publish after the outage", func() error {
		var perr error
		seq, perr = pub.Publish(ctx, ev)
		return perr
	})
	acked := time.Now()
	eventually(t, 30*time.Second, "the write visible after the outage", func() error {
		status, first, _, err := getAtPosition(ld.api+"/api/v1/persons/"+id, tok, 0)
		if err != nil || status != http.StatusOK || first != "After" {
			return fmt.Errorf("%d %q %w", status, first, err)
		}
		return nil
	})
	visible := time.Now()
	t.Logf("after a 10 s outage: published %v after NATS was back (sequence %d), visible %v after the publish, %v after NATS was back",
		acked.Sub(back).Round(time.Millisecond), seq, visible.Sub(acked).Round(time.Millisecond), visible.Sub(back).Round(time.Millisecond))
	if d := visible.Sub(acked); d > 2*time.Second {
		t.Errorf("visible %v after its publish once NATS was back, want within 2s", d)
	}
}

// getAtPosition GETs url with Lookup-Min-Position minPos (none when 0) and
// returns the status, the first_name of the answer and its Lookup-Position.
func getAtPosition(url, tok string, minPos uint64) (int, string, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if minPos > 0 {
		req.Header.Set("Lookup-Min-Position", strconv.FormatUint(minPos, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	var p struct {
		FirstName string `json:"first_name"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&p)
	return resp.StatusCode, p.FirstName, resp.Header.Get("Lookup-Position"), nil
}
