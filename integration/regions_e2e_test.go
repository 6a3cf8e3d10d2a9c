//go:build integration

package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/testcontainers/testcontainers-go"

	"github.com/lookup/persons/events"
)

// getBody GETs url with a token and returns the status and body.
func getBody(url, tok string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// regionsRun is the state TestTwoRegions carries from one phase to the next.
type regionsRun struct {
	r          *twoRegions
	jwks       []byte
	tok        string // read:persons
	adminToken string // region B's replicas' admin listener
	a, b       *lookupd
	people     *entities
	pub        *events.Publisher
}

// TestTwoRegions: region A (the origin's server of deploy/, a replica)
// and region B (a leaf node holding PERSONS as a mirror of region A's, a
// replica with LOOKUP_MAX_STALENESS=5s), on the secure NATS of deploy/
// (twoRegions: TLS with client certificates, the least-privileged users
// lookupd, publisher and, for the link, leaf), each region on its own
// network, the leaf node on both (the link).
//
//   - 1,000 publishes in A, each read at once in B with Lookup-Min-Position:
//     never anything but 200 with the write; the wait is reported.
//   - Region B's replica writes a snapshot into region B's bucket.
//   - The link cut for 30 s while A keeps publishing: B answers what it
//     has; a position it has not received answers 503; B turns not ready
//     after the bound, counted from the mirror's last heartbeat. A new
//     replica in B, on an empty volume, bootstraps from the snapshot in
//     region B's bucket meanwhile (region A unreachable), and is not ready.
//   - The link back: B ready and caught up (each entity equal to A's)
//     within 5 s of its mirror holding A's last sequence; the new replica
//     too, caught up from the mirror.
//   - Throughput of B's replica against A's, closed loop, reported.
//   - Refusals (regionRefusals): a model pointed at a mirror of another
//     stream, or at a mirror of another incarnation of its origin, and an
//     empty replica pointed at a part of the origin: lookupd exits 1
//     saying why.
func TestTwoRegions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Now()
	is := newIssuer(t)
	x := &regionsRun{r: startTwoRegions(ctx, t), jwks: is.jwks, tok: is.token(t, "read:persons", time.Hour),
		adminToken: "integration-admin-token-" + uuid.NewString()}
	x.a = startLookupd(ctx, t, x.r.lookupdA("lookupd-region-a-"+uuid.NewString(), x.jwks))
	x.b = startLookupd(ctx, t, x.r.lookupdB("lookupd-region-b-"+uuid.NewString(), "region-b", x.jwks, x.adminToken))
	x.a.waitReady(t)
	x.b.waitReady(t)
	t.Logf("two regions up (secrets, servers, streams, replicas ready) in %v", time.Since(start).Round(time.Millisecond))
	x.pub = events.NewPublisher(x.r.pubJS)
	x.people = &entities{t: t, business: uuid.NewString(), ids: make([]string, 50), versions: make([]uint64, 50)}
	for i := range x.people.ids {
		x.people.ids[i] = uuid.NewString()
	}

	x.readYourWrites(ctx, t)
	snap := x.snapshotB(t)
	cut, pub := x.cutOff(ctx, t)
	b2 := x.bootstrapB(ctx, t, snap)
	time.Sleep(time.Until(cut.Add(30 * time.Second))) // the duration under test
	last := x.restore(ctx, t, pub, b2)
	for _, id := range x.people.ids {
		sa, ba, erra := getBody(x.a.api+"/api/v1/persons/"+id, x.tok)
		for _, b := range []*lookupd{x.b, b2} {
			sb, bb, errb := getBody(b.api+"/api/v1/persons/"+id, x.tok)
			if erra != nil || errb != nil || sa != http.StatusOK || sa != sb || !bytes.Equal(ba, bb) {
				t.Errorf("person %s: region A %d %s %v, region B (%s) %d %s %v; want equal", id, sa, ba, erra, b.cfg.env["LOOKUP_REPLICA_ID"], sb, bb, errb)
			}
		}
	}
	x.throughput(t)
	for _, l := range []*lookupd{x.a, x.b, b2} {
		if err := l.ctr.Terminate(ctx, testcontainers.StopTimeout(20*time.Second)); err != nil {
			t.Fatalf("terminate lookupd: %v", err)
		}
	}
	x.refusals(ctx, t, last)
	t.Logf("TestTwoRegions ran in %v", time.Since(start).Round(time.Millisecond))
}

// readYourWrites publishes 1,000 events in region A, each read at once in
// region B with Lookup-Min-Position set to the sequence its publish
// returned, and reports the wait.
func (x *regionsRun) readYourWrites(ctx context.Context, t *testing.T) {
	t.Helper()
	ids := x.people.ids
	waits := make([]time.Duration, 0, 1000)
	for i := range 1000 {
		name := fmt.Sprintf("W%d", i)
		seq, err := x.pub.Publish(ctx, x.people.next(i%len(ids), name))
		if err != nil {
			t.Fatalf("publish %d in region A: %v", i, err)
		}
		start := time.Now()
		status, first, pos, err := getAtPosition(x.b.api+"/api/v1/persons/"+ids[i%len(ids)], x.tok, seq)
		waits = append(waits, time.Since(start))
		if err != nil || status != http.StatusOK || first != name {
			t.Fatalf("read %d in region B at sequence %d: %d %q (Lookup-Position %s), %v; want 200 %q", i, seq, status, first, pos, err, name)
		}
	}
	slices.Sort(waits)
	t.Logf("1,000 writes in region A read in region B with Lookup-Min-Position: p50 %v, p99 %v, max %v (GET included)",
		waits[len(waits)/2].Round(time.Microsecond), waits[len(waits)*99/100].Round(time.Microsecond), waits[len(waits)-1].Round(time.Microsecond))
}

// snapshotB has region B's replica write a snapshot into region B's
// bucket and returns its position.
func (x *regionsRun) snapshotB(t *testing.T) uint64 {
	t.Helper()
	status, body := adminPost(t, x.b.admin+"/snapshot", x.adminToken)
	m := regexp.MustCompile(`"position":(\d+)`).FindSubmatch(body)
	if status != http.StatusOK || m == nil {
		t.Fatalf("POST /snapshot in region B: %d %s, want 200 with a position", status, body)
	}
	pos, _ := strconv.ParseUint(string(m[1]), 10, 64)
	t.Logf("region B's replica wrote a snapshot at position %d into region B's bucket", pos)
	return pos
}

// publishing publishes events in region A every 20 ms until stopped.
type publishing struct {
	stop      context.CancelFunc
	done      chan struct{}
	published atomic.Int64
	lastSeq   atomic.Uint64
}

// startPublishing starts publishing; only its goroutine calls x.people.next
// until it is stopped.
func (x *regionsRun) startPublishing(ctx context.Context) *publishing {
	pctx, stop := context.WithCancel(ctx)
	p := &publishing{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for i := 0; pctx.Err() == nil; i++ {
			seq, err := x.pub.Publish(pctx, x.people.next(i%len(x.people.ids), fmt.Sprintf("C%d", i)))
			if err == nil {
				p.published.Add(1)
				p.lastSeq.Store(seq)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return p
}

// cutOff cuts the link and starts publishing in region A; it returns when
// region B, cut off, has turned not ready, with the time of the cut and
// the publishing.
func (x *regionsRun) cutOff(ctx context.Context, t *testing.T) (time.Time, *publishing) {
	t.Helper()
	ids := x.people.ids
	x.r.cut(t)
	cut := time.Now()
	pub := x.startPublishing(ctx)
	eventually(t, 10*time.Second, "a write published in region A after the cut", func() error {
		if pub.lastSeq.Load() == 0 {
			return errors.New("nothing published yet")
		}
		return nil
	})
	if status, _, _, err := getAtPosition(x.b.api+"/api/v1/persons/"+ids[0], x.tok, pub.lastSeq.Load()); err != nil || status != http.StatusServiceUnavailable {
		t.Errorf("region B, cut off, asked for sequence %d: %d, %v; want 503", pub.lastSeq.Load(), status, err)
	}
	if status, _, err := getBody(x.b.api+"/api/v1/persons/"+ids[1], x.tok); err != nil || (status != http.StatusOK && time.Since(cut) < 5*time.Second) {
		t.Errorf("region B, cut off %v ago, without a position: %d, %v; want its last state", time.Since(cut).Round(time.Millisecond), status, err)
	}
	eventually(t, 25*time.Second, "region B not ready once cut off beyond the bound", func() error {
		return expectStatus(x.b.admin+"/readyz", http.StatusServiceUnavailable)
	})
	notReady := time.Since(cut)
	t.Logf("region B not ready %v after the link was cut (bound 5s)", notReady.Round(time.Millisecond))
	// The bound counts from the mirror's last heartbeat from region A (one
	// a second), up to a second before the cut.
	if notReady < 4*time.Second {
		t.Errorf("region B not ready %v after the cut, before the 5s bound (less its heartbeat)", notReady)
	}
	if err := expectStatus(x.a.admin+"/readyz", http.StatusOK); err != nil {
		t.Errorf("region A during the cut: %v", err)
	}
	return cut, pub
}

// restore links the regions again, stops publishing and returns region
// A's last sequence once its mirror holds it and both region B replicas
// (b, and b2 bootstrapped during the cut) are ready and caught up.
func (x *regionsRun) restore(ctx context.Context, t *testing.T, pub *publishing, b2 *lookupd) uint64 {
	t.Helper()
	x.r.link(t)
	relinked := time.Now()
	pub.stop()
	<-pub.done
	// The stream's, not the last acknowledged: a publish cut short by the
	// stop may be stored without its acknowledgement.
	info, err := x.r.adminA.Stream(ctx, "PERSONS")
	if err != nil {
		t.Fatalf("region A's PERSONS: %v", err)
	}
	last := info.CachedInfo().State.LastSeq
	t.Logf("%d events published in region A during the cut, up to sequence %d", pub.published.Load(), last)

	var mirrored, leafBack time.Time
	eventually(t, 60*time.Second, "region B's mirror holding region A's last sequence", func() error {
		if n, err := x.r.hub.leafNodes(ctx); leafBack.IsZero() && err == nil && n == 1 {
			leafBack = time.Now()
		}
		m, err := x.r.mirror(ctx)
		if err != nil {
			return err
		}
		if got := m.State.LastSeq; got < last {
			return fmt.Errorf("mirror at %d, want %d", got, last)
		}
		mirrored = time.Now()
		return nil
	})
	readyAt := func(l *lookupd) func() error {
		return func() error {
			if err := expectStatus(l.admin+"/readyz", http.StatusOK); err != nil {
				return err
			}
			status, _, pos, err := getAtPosition(l.api+"/api/v1/persons/"+x.people.ids[0], x.tok, last)
			if err != nil {
				return err
			}
			if status != http.StatusOK {
				return fmt.Errorf("at %d: %d (Lookup-Position %s)", last, status, pos)
			}
			return nil
		}
	}
	eventually(t, 30*time.Second, "region B ready and caught up", readyAt(x.b))
	back := time.Since(mirrored)
	t.Logf("link back: the leaf node connected again %v after the link, its mirror caught up %v after the link, region B ready and caught up %v after its mirror",
		leafBack.Sub(relinked).Round(time.Millisecond), mirrored.Sub(relinked).Round(time.Millisecond), back.Round(time.Millisecond))
	if back > 5*time.Second {
		t.Errorf("region B caught up %v after its mirror, want within 5s", back)
	}
	eventually(t, 30*time.Second, "region B's bootstrapped replica ready and caught up", readyAt(b2))
	x.a.waitApplied(t, last, 30*time.Second)
	return last
}

// bootstrapB starts a second region B replica on an empty volume while the
// link is cut: it restores the snapshot at snap from region B's bucket
// (nothing of region A is reachable), and is not ready (its mirror is cut
// off beyond the bound).
func (x *regionsRun) bootstrapB(ctx context.Context, t *testing.T, snap uint64) *lookupd {
	t.Helper()
	start := time.Now()
	b2 := startLookupd(ctx, t, x.r.lookupdB("lookupd-region-b2-"+uuid.NewString(), "region-b-2", x.jwks, x.adminToken))
	line := regexp.MustCompile(`"msg":"bootstrapped from a snapshot[^\n]*"position":(\d+)`)
	eventually(t, 60*time.Second, "region B's new replica bootstrapped from the snapshot", func() error {
		m := line.FindStringSubmatch(b2.logs(ctx, t))
		if m == nil {
			return errors.New("no log line \"bootstrapped from a snapshot\"")
		}
		if m[1] != strconv.FormatUint(snap, 10) {
			t.Fatalf("region B's new replica bootstrapped from position %s, want the snapshot's %d", m[1], snap)
		}
		return nil
	})
	t.Logf("region B's new replica, on an empty volume, restored the snapshot at %d from region B's bucket %v after its start, the link cut",
		snap, time.Since(start).Round(time.Millisecond))
	eventually(t, 20*time.Second, "region B's new replica stale while the link is cut", func() error {
		status, body, err := getBody(b2.admin+"/readyz", "")
		if err != nil {
			return err
		}
		if status != http.StatusServiceUnavailable || !strings.Contains(string(body), `"stale":true`) {
			return fmt.Errorf("/readyz %d %s; want 503 stale", status, body)
		}
		return nil
	})
	return b2
}

// throughput measures GET person on region A's replica and region B's,
// closed loop with the same paths and workers, 5 s each in the order A, B,
// B, A (2.5 s a turn: a load on the machine that changes steadily weighs
// on both alike), and reports region B's rate as a ratio of region A's;
// only errors fail (a timed assertion on a shared machine would be flaky).
func (x *regionsRun) throughput(t *testing.T) {
	t.Helper()
	paths := make([]string, len(x.people.ids))
	for i, id := range x.people.ids {
		paths[i] = "/api/v1/persons/" + id
	}
	const turn, workers = 2500 * time.Millisecond, 8
	var answers [2]int64
	for _, i := range []int{0, 1, 1, 0} {
		l := []*lookupd{x.a, x.b}[i]
		n, errs, first := closedLoop(l.api, x.tok, paths, workers, turn)
		answers[i] += n
		if n == 0 || errs != 0 {
			t.Errorf("%s: %d answers, %d errors (first: %s); want answers and no error", l.cfg.env["LOOKUP_REPLICA_ID"], n, errs, first)
		}
	}
	a, b := float64(answers[0])/(2*turn).Seconds(), float64(answers[1])/(2*turn).Seconds()
	t.Logf("throughput, GET person, closed loop, %d workers, 5s each (A, B, B, A): region A %.0f/s, region B %.0f/s: region B / region A = %.2f",
		workers, a, b, b/a)
}
