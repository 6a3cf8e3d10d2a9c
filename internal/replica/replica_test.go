package replica

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

const biz = "0b0b0b0b-0000-4000-8000-00000000b12b"

// consumerID is the id of the i-th test consumer.
func consumerID(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// publishConsumers publishes upserts of consumers [from, to) at version v,
// named "v<v>".
func publishConsumers(t testing.TB, js jetstream.JetStream, from, to int, v uint64) {
	t.Helper()
	for i := from; i < to; i++ {
		ev, err := events.NewEvent("test", v, events.Consumer{ConsumerID: consumerID(i), BusinessID: biz,
			FirstName: fmt.Sprintf("v%d", v), LastName: "Test"})
		if err != nil {
			t.Fatal(err)
		}
		m, err := events.NewMsg(ev)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.PublishMsgAsync(m); err != nil {
			t.Fatal(err)
		}
		if (i-from)%2000 == 1999 || i == to-1 { // within the client's limit of pending acks
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(30 * time.Second):
				t.Fatal("publish acks did not arrive")
			}
		}
	}
}

// open opens a replica of root over js.
func open(t testing.TB, js jetstream.JetStream, root string, mutate func(*Config)) *Replica {
	t.Helper()
	cfg := Config{
		Root: root,
		NewProjector: func(s *projector.Store) *projector.Projector {
			return projector.New(js, s, projector.Config{Stream: "PERSONS", RefreshInterval: 100 * time.Millisecond})
		},
		Stream: func(ctx context.Context) (projector.StreamIdentity, error) {
			return projector.LookUpStream(ctx, js, "PERSONS")
		},
	}
	if mutate != nil {
		mutate(&cfg)
	}
	r, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// run runs r until the test ends (or stop is called) and returns stop,
// which returns Run's error after closing r.
func run(t testing.TB, r *Replica) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- r.Run(ctx) }()
	var once sync.Once
	var res error
	stop = func() error {
		once.Do(func() {
			cancel()
			res = errors.Join(<-errc, r.Close())
		})
		return res
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func waitCaughtUp(t testing.TB, r *Replica, seq uint64) {
	t.Helper()
	testkit.WaitFor(t, 60*time.Second, func() error {
		select {
		case <-r.CaughtUp():
		default:
			return errors.New("not caught up")
		}
		if got := r.Applied(); got < seq {
			return fmt.Errorf("applied %d, want %d", got, seq)
		}
		return nil
	})
}

// checkNames checks that consumers [0, n) are named want.
func checkNames(t *testing.T, r *Replica, n int, want string) {
	t.Helper()
	for i := range n {
		p, err := r.Person(t.Context(), consumerID(i))
		if err != nil || p.FirstName != want {
			t.Fatalf("consumer %d: %+v, %v; want first name %q", i, p, err, want)
		}
	}
}

func TestRebuildSwapsWhileServing(t *testing.T) {
	_, js := testkit.StartNATS(t)
	testkit.PersonsStream(t, js)
	const n = 2000
	publishConsumers(t, js, 0, n, 1)
	root := t.TempDir()
	r := open(t, js, root, nil)
	stop := run(t, r)
	waitCaughtUp(t, r, n)
	oldDir := r.Dir()

	// Readers all along: every answer is right, the position never goes back.
	var (
		reads, bad atomic.Int64
		done       = make(chan struct{})
		wg         sync.WaitGroup
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last uint64
			for i := w; ; i += 4 {
				select {
				case <-done:
					return
				default:
				}
				pos := r.Applied()
				p, err := r.Person(t.Context(), consumerID(i%n))
				if err != nil || p.FirstName != "v1" || pos < last {
					bad.Add(1)
				}
				last = pos
				reads.Add(1)
			}
		}()
	}
	if err := r.Rebuild(); err != nil {
		t.Fatal(err)
	}
	if err := r.Rebuild(); !errors.Is(err, ErrRebuildRunning) {
		t.Errorf("second Rebuild: %v, want ErrRebuildRunning", err)
	}
	// Writes go on during the rebuild.
	publishConsumers(t, js, n, n+500, 1)
	testkit.WaitFor(t, 60*time.Second, func() error {
		if r.Dir() == oldDir || r.Rebuilding() {
			return errors.New("not swapped yet")
		}
		return nil
	})
	waitCaughtUp(t, r, n+500)
	close(done)
	wg.Wait()
	if bad.Load() != 0 {
		t.Errorf("%d of %d reads during the rebuild failed or saw the position go back", bad.Load(), reads.Load())
	}
	checkNames(t, r, n+500, "v1")
	if _, err := os.Stat(filepath.Join(oldDir, "MANIFEST")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("old model's MANIFEST still there after the swap: %v", err)
	}
	if active, _ := ActiveDir(root); active != r.Dir() {
		t.Errorf("ACTIVE names %s, serving %s", active, r.Dir())
	}
	// Projection goes on in the new model.
	publishConsumers(t, js, 0, 10, 2)
	waitCaughtUp(t, r, n+510)
	checkNames(t, r, 10, "v2")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// A restart opens the rebuilt model.
	r2 := open(t, js, root, nil)
	if r2.Dir() != r.Dir() {
		t.Errorf("restart opened %s, want %s", r2.Dir(), r.Dir())
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestBootstrapFromSnapshot(t *testing.T) {
	_, js := testkit.StartNATS(t)
	testkit.PersonsStream(t, js)
	const n = 3000
	publishConsumers(t, js, 0, n, 1)
	sn, err := projector.NewSnapshots(js, projector.SnapshotsConfig{Bucket: "SNAPS"})
	if err != nil {
		t.Fatal(err)
	}
	withSnapshots := func(c *Config) { c.Snapshots = sn }
	a := open(t, js, t.TempDir(), withSnapshots)
	if _, _, err := a.Snapshot(t.Context()); !errors.Is(err, ErrNotCaughtUp) {
		t.Errorf("snapshot before catching up: %v, want ErrNotCaughtUp", err)
	}
	stopA := run(t, a)
	waitCaughtUp(t, a, n)
	info, _, err := a.Snapshot(t.Context())
	if err != nil || info.Position != n {
		t.Fatalf("Snapshot: %+v, %v; want position %d", info, err, n)
	}
	if err := stopA(); err != nil {
		t.Fatal(err)
	}
	publishConsumers(t, js, 0, 100, 2)

	logger, logs := testkit.JSONLogger()
	root := t.TempDir()
	b := open(t, js, root, func(c *Config) { withSnapshots(c); c.Logger = logger })
	run(t, b)
	waitCaughtUp(t, b, n+100)
	checkNames(t, b, 100, "v2")
	p := b.Progress()
	if p.Applied != 100 {
		t.Errorf("applied %d events after bootstrap, want the 100 after the snapshot", p.Applied)
	}
	if !strings.Contains(logs.String(), "bootstrapped from a snapshot") {
		t.Errorf("no bootstrap log line:\n%s", logs)
	}
	if b.Dir() == root {
		t.Errorf("restored model served from %s, want a model directory", b.Dir())
	}
}

func TestRebuildOnMismatch(t *testing.T) {
	_, js := testkit.StartNATS(t)
	testkit.PersonsStream(t, js)
	publishConsumers(t, js, 0, 50, 1)
	root := t.TempDir()
	r := open(t, js, root, nil)
	stop := run(t, r)
	waitCaughtUp(t, r, 50)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// The stream is deleted and created again with other events.
	if err := js.DeleteStream(t.Context(), "PERSONS"); err != nil {
		t.Fatal(err)
	}
	testkit.PersonsStream(t, js)
	publishConsumers(t, js, 0, 20, 3)

	t.Run("refused by default", func(t *testing.T) {
		r := open(t, js, root, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		err := r.Run(ctx)
		_ = r.Close()
		if !errors.Is(err, projector.ErrStreamMismatch) {
			t.Fatalf("Run: %v, want ErrStreamMismatch", err)
		}
	})
	t.Run("rebuilt with RebuildOnMismatch", func(t *testing.T) {
		r := open(t, js, root, func(c *Config) { c.RebuildOnMismatch = true })
		run(t, r)
		waitCaughtUp(t, r, 20)
		checkNames(t, r, 20, "v3")
		if _, err := r.Person(t.Context(), consumerID(30)); !errors.Is(err, events.ErrNotFound) {
			t.Errorf("consumer of the old stream: %v, want not found", err)
		}
	})
}

// TestStopDuringRebuild stops the replica (as a shutdown does) while a
// rebuild runs, before its swap and during it: Run and Close end without
// an error, and the next Open serves a whole model (the live one before
// the swap's commit point, the rebuilt one after it) that catches up.
func TestStopDuringRebuild(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inSwap bool
	}{
		{"before the swap", false},
		{"during the swap", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, js := testkit.StartNATS(t)
			testkit.PersonsStream(t, js)
			const n = 3000
			publishConsumers(t, js, 0, n, 1)
			root := t.TempDir()
			r := open(t, js, root, nil)
			oldDir := r.Dir()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			swapping := make(chan struct{})
			if tc.inSwap {
				r.swapHook = func() { close(swapping); cancel() }
			}
			errc := make(chan error, 1)
			go func() { errc <- r.Run(ctx) }()
			waitCaughtUp(t, r, n)
			if err := r.Rebuild(); err != nil {
				t.Fatal(err)
			}
			if tc.inSwap {
				select {
				case <-swapping:
				case <-time.After(60 * time.Second):
					t.Fatal("the rebuild did not reach its swap")
				}
			} else {
				testkit.WaitFor(t, 30*time.Second, func() error {
					if !newModelUnderWay(root) {
						return errors.New("no rebuild directory yet")
					}
					return nil
				})
				cancel()
			}
			select {
			case err := <-errc:
				if err != nil {
					t.Fatalf("Run: %v, want nil on a stop", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return after its context was cancelled")
			}
			if err := r.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			active, err := ActiveDir(root)
			if err != nil {
				t.Fatal(err)
			}
			if wantOld := !tc.inSwap; (active == oldDir) != wantOld {
				t.Errorf("ACTIVE names %s (old %s); want the old model: %v", active, oldDir, wantOld)
			}
			publishConsumers(t, js, 0, 10, 2)
			r2 := open(t, js, root, nil)
			stop := run(t, r2)
			waitCaughtUp(t, r2, n+10)
			checkNames(t, r2, 10, "v2")
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(root)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.IsDir() && filepath.Join(root, e.Name()) != r2.Dir() {
					t.Errorf("%s left beside the active model after the restart", e.Name())
				}
			}
		})
	}
}

// TestRebuildDuringStop asks for rebuilds while Run stops (an admin's POST
// /rebuild during a shutdown): each is refused or runs, Run returns nil,
// and the race detector sees no Add on the rebuilds' WaitGroup racing
// Run's Wait for them. After Run has returned a rebuild is refused.
func TestRebuildDuringStop(t *testing.T) {
	_, js := testkit.StartNATS(t)
	testkit.PersonsStream(t, js)
	publishConsumers(t, js, 0, 100, 1)
	r := open(t, js, t.TempDir(), nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- r.Run(ctx) }()
	waitCaughtUp(t, r, 100)
	stopped := make(chan error, 1)
	go func() {
		for {
			select {
			case err := <-errc:
				stopped <- err
				return
			default:
			}
			_ = r.Rebuild() // refused (running, or stopping) or started
		}
	}()
	cancel()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("Run: %v, want nil on a stop", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	if err := r.Rebuild(); err == nil || errors.Is(err, ErrRebuildRunning) {
		t.Errorf("Rebuild after Run returned: %v, want it refused as not running", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// Rebuilding reports whether a rebuild is under way (until its model is
// swapped in and the old one deleted, or it failed).
func (r *Replica) Rebuilding() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rebuilding
}

// TestOpenStoreOptions: every model's store opens with Config.Store (here
// its encryption key), and a failure to open one names the read model.
func TestOpenStoreOptions(t *testing.T) {
	_, js := testkit.StartNATS(t)
	testkit.PersonsStream(t, js)
	root := t.TempDir()
	key := []byte("0123456789abcdef0123456789abcdef")
	withKey := func(c *Config) { c.Store.EncryptionKey = key }
	if err := open(t, js, root, withKey).Close(); err != nil {
		t.Fatal(err)
	}
	if err := open(t, js, root, withKey).Close(); err != nil {
		t.Fatalf("reopened with its key: %v", err)
	}
	r, err := Open(Config{Root: root, NewProjector: func(s *projector.Store) *projector.Projector {
		return projector.New(js, s, projector.Config{Stream: "PERSONS"})
	}})
	if err == nil {
		r.Close()
		t.Fatal("an encrypted model opened without its key")
	}
	if !strings.HasPrefix(err.Error(), "read model: ") {
		t.Errorf("err = %q, want it to name the read model", err)
	}
}
