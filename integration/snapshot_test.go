//go:build integration

package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/testcontainers/testcontainers-go"

	"github.com/lookup/persons/events"
)

// snapshotEvents is the size of the stream of TestSnapshotBootstrap:
// LOOKUP_IT_SNAPSHOT_EVENTS, else a million.
func snapshotEvents(t *testing.T) int {
	if v := os.Getenv("LOOKUP_IT_SNAPSHOT_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			t.Fatalf("LOOKUP_IT_SNAPSHOT_EVENTS=%q: want a number of at least 1000", v)
		}
		return n
	}
	return 1_000_000
}

// mixedEvents returns n events, half consumers and half signers with
// personal data (one per consumer), and the consumer ids.
func mixedEvents(t *testing.T, n int) ([]*nats.Msg, []string) {
	t.Helper()
	rng := mathrand.New(mathrand.NewPCG(42, 7))
	biz := uuid.NewString()
	msgs := make([]*nats.Msg, 0, n)
	ids := make([]string, 0, n/2)
	add := func(data any) {
		ev, err := events.NewEvent(testSource, 1, data)
		if err != nil {
			t.Fatal(err)
		}
		m, err := events.NewMsg(ev)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	for i := 0; len(msgs) < n; i++ {
		c := uuid.NewString()
		ids = append(ids, c)
		add(events.Consumer{ConsumerID: c, BusinessID: biz, FirstName: "First" + strconv.Itoa(i), LastName: "Last"})
		if len(msgs) < n {
			add(events.Signer{SignerID: uuid.NewString(), ConsumerID: c, FirstName: "Signer", LastName: strconv.Itoa(i),
				AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusActive, Type: events.SignerTypeParent,
				Address: &events.Address{Line1: strconv.Itoa(i) + " Main St", City: "Springfield", State: "IL", ZipCode: "62701", Country: "US"},
				SSN:     fmt.Sprintf("%03d-%02d-%04d", 100+rng.IntN(800), 10+rng.IntN(89), rng.IntN(10000)), DateOfBirth: "1970-01-02"})
		}
	}
	return msgs, ids
}

// publishFast publishes msgs to the server at url asynchronously, a
// window at a time, and returns the last sequence.
func publishFast(t *testing.T, url string, msgs []*nats.Msg) uint64 {
	t.Helper()
	const window = 16000
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(window))
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i := 0; i < len(msgs); i += window {
		futures := make([]jetstream.PubAckFuture, 0, window)
		for _, m := range msgs[i:min(i+window, len(msgs))] {
			f, err := js.PublishMsgAsync(m)
			if err != nil {
				t.Fatalf("publish: %v", err)
			}
			futures = append(futures, f)
		}
		for _, f := range futures {
			select {
			case ack := <-f.Ok():
				last = max(last, ack.Sequence)
			case err := <-f.Err():
				t.Fatalf("publish: %v", err)
			case <-time.After(60 * time.Second):
				t.Fatal("no publish acknowledgement within 60s")
			}
		}
	}
	return last
}

// TestSnapshotBootstrap is issue 11's acceptance test: replica A projects
// a million mixed events from zero and writes a snapshot (encrypted, with
// the read model's key); replica B starts on an empty volume, bootstraps
// from it and must be ready in at most a fifth of A's replay time, and
// answer exactly as A for a random sample of 1,000 ids. Then B rebuilds
// its model under a steady 2,000 requests/s: no request fails, no answer
// differs from A's, and the old model's directory is gone.
func TestSnapshotBootstrap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nw, nn, _ := singleNATS(ctx, t)
	n := snapshotEvents(t)
	msgs, ids := mixedEvents(t, n)
	t0 := time.Now()
	last := publishFast(t, nn.url, msgs)
	t.Logf("published %d events in %v (last sequence %d)", n, time.Since(t0).Round(time.Millisecond), last)

	is := newIssuer(t)
	adminToken := "integration-admin-token-0123456789abcdef"
	key := bytes.Repeat([]byte{0x5a}, 32)
	cfg := func(volume string) lookupdConfig {
		return lookupdConfig{network: nw, natsURL: "nats://nats:4222", jwks: is.jwks, volume: volume,
			env: map[string]string{"LOOKUP_SNAPSHOT_BUCKET": "LOOKUP_SNAPSHOTS", "LOOKUP_SNAPSHOT_INTERVAL": "0s",
				"LOOKUP_ADMIN_TOKEN_FILE": "/etc/lookupd-admin-token", "LOOKUP_ENCRYPTION_KEY_FILE": "/etc/lookupd-key",
				"LOOKUP_AUDIT": "off"},
			files: []testcontainers.ContainerFile{
				{Reader: strings.NewReader(adminToken), ContainerFilePath: "/etc/lookupd-admin-token", FileMode: 0o644},
				{Reader: bytes.NewReader(key), ContainerFilePath: "/etc/lookupd-key", FileMode: 0o644},
			}}
	}

	startA := time.Now()
	a := startLookupd(ctx, t, cfg("lookupd-snap-a-"+uuid.NewString()))
	a.waitReadyWithin(t, 10*time.Minute)
	replay := time.Since(startA)
	t.Logf("replica A: replay of %d events from zero, ready in %v", n, replay.Round(time.Millisecond))

	t1 := time.Now()
	status, body := adminPost(t, a.admin+"/snapshot", adminToken)
	if status != http.StatusOK || !strings.Contains(string(body), fmt.Sprintf(`"position":%d`, last)) {
		t.Fatalf("POST /snapshot: %d %s, want 200 at position %d", status, body, last)
	}
	t.Logf("snapshot written in %v: %s", time.Since(t1).Round(time.Millisecond), bytes.TrimSpace(body))
	if ssn := firstSSN(msgs); bytes.Contains(copyStore(t, nn.ctr.GetContainerID()), []byte(ssn)) {
		t.Errorf("an SSN is in plaintext in the NATS store (the snapshot bucket)")
	}

	startB := time.Now()
	b := startLookupd(ctx, t, cfg("lookupd-snap-b-"+uuid.NewString()))
	b.waitReadyWithin(t, 10*time.Minute)
	boot := time.Since(startB)
	t.Logf("replica B: bootstrap from the snapshot, ready in %v = %.3f of A's replay (%v)", boot.Round(time.Millisecond),
		boot.Seconds()/replay.Seconds(), replay.Round(time.Millisecond))
	// The log reaches stderr within 200 ms (it is buffered): poll for the line.
	var logs string
	eventually(t, 10*time.Second, "B logs that it bootstrapped from a snapshot", func() error {
		if logs = b.logs(ctx, t); !strings.Contains(logs, "bootstrapped from a snapshot") {
			return errors.New("no such line yet")
		}
		return nil
	})
	for line := range strings.SplitSeq(logs, "\n") {
		if strings.Contains(line, `"component":"replica"`) || strings.Contains(line, `"component":"snapshots"`) ||
			strings.Contains(line, "caught up") {
			t.Logf("B: %s", line)
		}
	}
	if boot.Seconds() > 0.2*replay.Seconds() {
		t.Errorf("B ready in %v, more than 20%% of A's replay %v", boot, replay)
	}

	tok := is.token(t, "read:persons read:persons:ssn", time.Hour)
	sample := sampleReference(t, a, ids, tok)
	for path, want := range sample {
		if got := getOK(t, b.api, path, tok); !bytes.Equal(got.body, want) {
			t.Fatalf("B answers %s with\n%s\nA with\n%s", path, got.body, want)
		}
	}
	rebuildUnderLoad(ctx, t, b, sample, tok, adminToken)
}

// waitReadyWithin polls /readyz until it answers 200, for up to timeout.
func (l *lookupd) waitReadyWithin(t *testing.T, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "lookupd /readyz", func() error {
		return expectStatus(l.admin+"/readyz", http.StatusOK)
	})
}

func firstSSN(msgs []*nats.Msg) string {
	for _, m := range msgs {
		if i := bytes.Index(m.Data, []byte(`"ssn":"`)); i >= 0 {
			return string(m.Data[i+7 : i+18])
		}
	}
	return "no ssn"
}

// sampleReference returns A's answers to 1,000 requests on random ids: a
// person, or its signers with their protected data, by path.
func sampleReference(t *testing.T, a *lookupd, ids []string, tok string) map[string][]byte {
	t.Helper()
	rng := mathrand.New(mathrand.NewPCG(1, 2))
	out := map[string][]byte{}
	for len(out) < 1000 {
		id := ids[rng.IntN(len(ids))]
		path := "/api/v1/persons/" + id
		if rng.IntN(2) == 0 {
			path = "/api/v1/authorized-signers?consumer_id=" + id + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL"
		}
		out[path] = getOK(t, a.api, path, tok).body
	}
	return out
}

func adminPost(t *testing.T, url, tok string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := (&http.Client{Timeout: 5 * time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

// pacedLoad sends GETs at a steady rate over paths, comparing each answer
// with the reference.
type pacedLoad struct {
	stop                  chan struct{}
	done                  sync.WaitGroup
	total, failed, differ atomic.Int64
	unsent                atomic.Int64 // requests the workers were too busy to send at their time
	mu                    sync.Mutex
	examples              []string
}

// startPacedLoad sends perSecond requests a second, spread over 10 ms
// ticks, from a pool of workers sharing keep-alive connections (enough for
// the rate at 100 ms a request). A request whose worker is not free at its
// time is not sent, and counted apart: a shortfall of the load, not a
// failure of the server.
func startPacedLoad(base, tok string, sample map[string][]byte, perSecond int) *pacedLoad {
	paths := make([]string, 0, len(sample))
	for p := range sample {
		paths = append(paths, p)
	}
	l := &pacedLoad{stop: make(chan struct{})}
	tokens := make(chan string, perSecond)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for range perSecond / 10 {
		l.done.Go(func() {
			for path := range tokens {
				l.one(client, base, path, tok, sample[path])
			}
		})
	}
	l.done.Go(func() {
		defer close(tokens)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; {
			select {
			case <-l.stop:
				return
			case <-tick.C:
				for range perSecond / 100 {
					select {
					case tokens <- paths[i%len(paths)]:
					default:
						l.unsent.Add(1)
					}
					i++
				}
			}
		}
	})
	return l
}

func (l *pacedLoad) one(client *http.Client, base, path, tok string, want []byte) {
	l.total.Add(1)
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		l.fail(err.Error())
		return
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	_, err = body.ReadFrom(resp.Body)
	switch {
	case err != nil || resp.StatusCode != http.StatusOK:
		l.fail(fmt.Sprintf("%d %v %s", resp.StatusCode, err, body.Bytes()))
	case !bytes.Equal(body.Bytes(), want):
		l.differ.Add(1)
	}
}

func (l *pacedLoad) fail(example string) {
	l.failed.Add(1)
	l.mu.Lock()
	if len(l.examples) < 5 {
		l.examples = append(l.examples, example)
	}
	l.mu.Unlock()
}

// Stop ends the load and waits for the requests in flight.
func (l *pacedLoad) Stop() {
	close(l.stop)
	l.done.Wait()
}

// rebuildUnderLoad rebuilds l's model with POST /rebuild under a steady
// 2,000 requests/s over sample, each answer compared with the reference.
func rebuildUnderLoad(ctx context.Context, t *testing.T, l *lookupd, sample map[string][]byte, tok, adminToken string) {
	t.Helper()
	load := startPacedLoad(l.api, tok, sample, 2000)
	time.Sleep(2 * time.Second) // load established before the rebuild
	status, body := adminPost(t, l.admin+"/rebuild", adminToken)
	if status != http.StatusAccepted {
		load.Stop()
		t.Fatalf("POST /rebuild: %d %s", status, body)
	}
	start := time.Now()
	eventually(t, 15*time.Minute, "rebuild swapped in", func() error {
		v, err := scrape(l.admin+"/metrics", `lookup_rebuilds_total{outcome="swapped"}`)
		if err != nil || v != 1 {
			return fmt.Errorf("rebuilds swapped %v: %w", v, err)
		}
		return nil
	})
	took := time.Since(start)
	time.Sleep(2 * time.Second) // load on the new model too
	load.Stop()
	total, failed, differ := load.total.Load(), load.failed.Load(), load.differ.Load()
	t.Logf("rebuild in %v under a load of 2,000 requests/s: %d requests sent (%.0f/s; %d not sent, the workers busy), %d failed, %d differed from the reference",
		took.Round(time.Millisecond), total, float64(total)/(took+4*time.Second).Seconds(), load.unsent.Load(), failed, differ)
	if total < 1000 {
		t.Errorf("only %d requests during the rebuild", total)
	}
	if failed != 0 || differ != 0 {
		t.Errorf("during the rebuild %d of %d requests failed and %d answers differed from the reference; first failures: %v",
			failed, total, differ, load.examples)
	}
	logs := l.logs(ctx, t)
	m := regexp.MustCompile(`"msg":"rebuilt read model swapped in; the old one is deleted".*"old_dir":"([^"]+)"`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no swap log line naming the old model")
	}
	out, err := exec.Command("docker", "cp", l.ctr.GetContainerID()+":"+m[1], t.TempDir()).CombinedOutput()
	if err == nil {
		t.Errorf("the old model %s is still on the volume after the swap", m[1])
	} else if !strings.Contains(string(out), "Could not find") && !strings.Contains(string(out), "No such") {
		t.Errorf("docker cp of the old model: %v %s", err, out)
	}
}
