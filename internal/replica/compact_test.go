package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

// The distinctive values of the person whose erasure the tests follow,
// found in no other event.
var secrets = []string{"987654329", "Zyxwvutsrq", "77 Quillfeather Lane"}

const (
	erasedID = "00000000-0000-4000-8000-0000000e7a5e"
	signer1  = "00000000-0000-4000-8000-0000000000a1"
	signer2  = "00000000-0000-4000-8000-0000000000a2"
)

// publishOne publishes an event of data at version v and returns its
// stream sequence.
func publishOne(t *testing.T, js jetstream.JetStream, v uint64, data any) uint64 {
	t.Helper()
	ev, err := events.NewEvent("test", v, data)
	if err != nil {
		t.Fatal(err)
	}
	m, err := events.NewMsg(ev)
	if err != nil {
		t.Fatal(err)
	}
	ack, err := js.PublishMsg(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

// publishErased publishes the consumer erasedID with two signers carrying
// the secrets and returns the last sequence.
func publishErased(t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	publishOne(t, js, 1, events.Consumer{ConsumerID: erasedID, BusinessID: biz, FirstName: "Erin", LastName: secrets[1]})
	var seq uint64
	for _, sid := range []string{signer1, signer2} {
		seq = publishOne(t, js, 1, events.Signer{SignerID: sid, ConsumerID: erasedID, FirstName: "Sam", LastName: secrets[1],
			HIPAAAuthorized: true, AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusActive,
			Type:    events.SignerTypeGuardian,
			Address: &events.Address{Line1: secrets[2], City: "Springfield", State: "IL", ZipCode: "62701", Country: "US"},
			SSN:     secrets[0], DateOfBirth: "1961-07-04"})
	}
	return seq
}

// filesHolding returns "file: value" for each value of secrets found in a
// file under root.
func filesHolding(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path) //nolint:gosec // G122: the test's own directory
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				found = append(found, fmt.Sprintf("%s: %q", path, s))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// modelDirs returns the model directories of root.
func modelDirs(t *testing.T, root string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, modelPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// withoutCompression opens every store with a memory budget, under which
// Badger does not compress its tables (internal/badgermem): a value left
// in a file is then found as written. (Badger's default is Snappy.)
func withoutCompression(c *Config) { c.Store.MemoryBudget = projector.MinMemoryBudget }

// TestCompactErases: the values of a deleted consumer and its signers are
// in the model's files after the deletion (so that the scan can fail) and
// in no file of the data directory after Compact; the model still answers
// and a restart serves the compacted model.
func TestCompactErases(t *testing.T) {
	_, js := testkit.StartNATS(t)
	testkit.PersonsStream(t, js)
	publishConsumers(t, js, 0, 50, 1)
	root := t.TempDir()
	r := open(t, js, root, withoutCompression)
	stop := run(t, r)
	waitCaughtUp(t, r, publishErased(t, js))
	if _, sg, err := r.Signers(t.Context(), erasedID); err != nil || len(sg) != 2 {
		t.Fatalf("Signers before the deletion: %d, %v", len(sg), err)
	}
	del := publishOne(t, js, 2, events.ConsumerDeleted{ConsumerID: erasedID})
	waitCaughtUp(t, r, del)
	if last, err := r.LastDeletion(); err != nil || last != del {
		t.Fatalf("LastDeletion = %d, %v; want %d", last, err, del)
	}
	if found := filesHolding(t, root); len(found) == 0 {
		t.Fatal("none of the values is in the files after the deletion: the scan cannot tell an erasure")
	}
	if info, err := r.Compacted(); err != nil || info != (CompactionInfo{}) {
		t.Errorf("Compacted before any compaction: %+v, %v; want the zero value", info, err)
	}
	oldDir := r.Dir()

	info, err := r.Compact(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if found := filesHolding(t, root); len(found) > 0 {
		t.Errorf("after Compact the deleted person's values are still in the files:\n%v", found)
	}
	if info.Position < del || info.At.IsZero() {
		t.Errorf("Compact = %+v, want a position >= %d and a time", info, del)
	}
	if got, err := r.Compacted(); err != nil || got != info {
		t.Errorf("Compacted = %+v, %v; want %+v", got, err, info)
	}
	if dirs := modelDirs(t, root); len(dirs) != 1 || dirs[0] != r.Dir() || r.Dir() == oldDir {
		t.Errorf("model directories %v, serving %s (before %s); want only the new one", dirs, r.Dir(), oldDir)
	}
	checkErased(t, r, del)
	if n := testutil.ToFloat64(r.metrics.compactions.WithLabelValues("done")); n != 1 {
		t.Errorf("compactions done = %v, want 1", n)
	}
	if pos := testutil.ToFloat64(r.metrics.compactionPos); pos != float64(info.Position) {
		t.Errorf("last compaction position metric = %v, want %d", pos, info.Position)
	}
	// Projection goes on in the compacted model.
	publishConsumers(t, js, 0, 5, 2)
	waitCaughtUp(t, r, del+5)
	checkNames(t, r, 5, "v2")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	r2 := open(t, js, root, withoutCompression)
	defer r2.Close()
	if r2.Dir() != r.Dir() {
		t.Errorf("restart opened %s, want the compacted %s", r2.Dir(), r.Dir())
	}
	if got, err := r2.Compacted(); err != nil || !got.At.Equal(info.At) || got.Position != info.Position {
		t.Errorf("Compacted after a restart = %+v, %v; want %+v", got, err, info)
	}
}

// checkErased checks that the consumer erasedID is gone from r, the
// others still there, and its deletion, at del, listed.
func checkErased(t *testing.T, r *Replica, del uint64) {
	t.Helper()
	if _, err := r.Person(t.Context(), erasedID); !errors.Is(err, events.ErrNotFound) {
		t.Errorf("Person(deleted): %v, want not found", err)
	}
	if _, _, err := r.Signers(t.Context(), erasedID); !errors.Is(err, events.ErrNotFound) {
		t.Errorf("Signers(deleted): %v, want not found", err)
	}
	checkNames(t, r, 5, "v1")
	var got []projector.Deletion
	if err := r.Deletions(t.Context(), 0, func(d projector.Deletion) error { got = append(got, d); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Seq != del || got[0].Entity.ID != erasedID || got[0].Entity.Kind != events.KindConsumer {
		t.Errorf("Deletions = %+v, want the consumer's at %d", got, del)
	}
}

// TestCompactCancelled cancels a compaction at each of its stages: Compact
// returns the context's error, the live model is still served and
// current, nothing is left beside it, no compaction is recorded, and the
// next Open serves the same model.
func TestCompactCancelled(t *testing.T) {
	_, js := testkit.StartNATS(t)
	testkit.PersonsStream(t, js)
	const n = 500
	publishConsumers(t, js, 0, n, 1)
	for _, stage := range []string{stageRestore, stageCatchUp, stageSwap} {
		t.Run(stage, func(t *testing.T) {
			root := t.TempDir()
			r := open(t, js, root, nil)
			stop := run(t, r)
			waitCaughtUp(t, r, n)
			oldDir := r.Dir()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			reached := false
			r.compactHook = func(s string) {
				if s == stage {
					reached = true
					cancel()
				}
			}
			if _, err := r.Compact(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("Compact: %v, want context.Canceled", err)
			}
			if !reached {
				t.Fatalf("the compaction did not reach %s", stage)
			}
			if r.Dir() != oldDir {
				t.Errorf("serving %s, want the live %s", r.Dir(), oldDir)
			}
			checkNames(t, r, n, "v1")
			if dirs := modelDirs(t, root); len(dirs) != 0 {
				t.Errorf("left beside the live model: %v", dirs)
			}
			if info, err := r.Compacted(); err != nil || info != (CompactionInfo{}) {
				t.Errorf("Compacted = %+v, %v; want none", info, err)
			}
			if f := testutil.ToFloat64(r.metrics.compactions.WithLabelValues("failed")); f != 1 {
				t.Errorf("compactions failed = %v, want 1", f)
			}
			// A compaction after it succeeds.
			r.compactHook = nil
			if _, err := r.Compact(t.Context()); err != nil {
				t.Fatalf("Compact after a cancelled one: %v", err)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			r2 := open(t, js, root, nil)
			defer r2.Close()
			if dirs := modelDirs(t, root); len(dirs) != 1 || dirs[0] != r2.Dir() {
				t.Errorf("after a restart: model directories %v, serving %s", dirs, r2.Dir())
			}
		})
	}
}

// TestCompactRefused: Compact is refused before Run, while a rebuild or
// another compaction is under way, and a rebuild while a compaction is.
func TestCompactRefused(t *testing.T) {
	_, js := testkit.StartNATS(t)
	testkit.PersonsStream(t, js)
	publishConsumers(t, js, 0, 100, 1)
	// gate, when set, holds a rebuild (or compaction) at its start.
	var gate atomic.Pointer[chan struct{}]
	r := open(t, js, t.TempDir(), func(c *Config) {
		c.Building = func(start bool) {
			if g := gate.Load(); start && g != nil {
				<-*g
			}
		}
	})
	if _, err := r.Compact(t.Context()); err == nil {
		t.Error("Compact before Run succeeded")
	}
	run(t, r)
	waitCaughtUp(t, r, 100)
	inside := make(chan struct{})
	release := make(chan struct{})
	r.compactHook = func(s string) {
		if s == stageCatchUp {
			close(inside)
			<-release
		}
	}
	errc := make(chan error, 1)
	go func() { _, err := r.Compact(t.Context()); errc <- err }()
	<-inside
	if _, err := r.Compact(t.Context()); !errors.Is(err, ErrCompactionRunning) {
		t.Errorf("Compact during a compaction: %v, want ErrCompactionRunning", err)
	}
	if err := r.Rebuild(); !errors.Is(err, ErrCompactionRunning) {
		t.Errorf("Rebuild during a compaction: %v, want ErrCompactionRunning", err)
	}
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	r.compactHook = nil
	if info, err := r.Compacted(); err != nil || info.At.IsZero() {
		t.Fatalf("Compacted after a compaction: %+v, %v", info, err)
	}
	held := make(chan struct{})
	gate.Store(&held)
	if err := r.Rebuild(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Compact(t.Context()); !errors.Is(err, ErrRebuildRunning) {
		t.Errorf("Compact during a rebuild: %v, want ErrRebuildRunning", err)
	}
	gate.Store(nil)
	close(held)
	testkit.WaitFor(t, 60*time.Second, func() error {
		if r.Rebuilding() {
			return errors.New("still rebuilding")
		}
		return nil
	})
	if info, err := r.Compacted(); err != nil || info != (CompactionInfo{}) {
		t.Errorf("Compacted after a rebuild: %+v, %v; want none (the rebuilt model's files hold what it overwrote)", info, err)
	}
}

// TestCompactEvery: ticks compact nothing while no deletion is newer than
// the last compaction, and compact once one is.
func TestCompactEvery(t *testing.T) {
	_, js := testkit.StartNATS(t)
	testkit.PersonsStream(t, js)
	publishConsumers(t, js, 0, 50, 1)
	root := t.TempDir()
	r := open(t, js, root, nil)
	run(t, r)
	waitCaughtUp(t, r, 50)
	type tick struct {
		info CompactionInfo
		err  error
	}
	ticks := make(chan tick, 100)
	r.compactTicked = func(info CompactionInfo, err error) { ticks <- tick{info, err} }
	reports := make(chan CompactionInfo, 10)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	logger, logs := testkit.JSONLogger()
	go func() {
		defer close(done)
		r.CompactEvery(ctx, 10*time.Millisecond, logger, func(i CompactionInfo) { reports <- i })
	}()
	defer func() { cancel(); <-done }()
	next := func() tick {
		t.Helper()
		select {
		case tk := <-ticks:
			return tk
		case <-time.After(30 * time.Second):
			t.Fatal("no tick within 30s")
			return tick{}
		}
	}
	idle := func(what string) {
		t.Helper()
		dir := r.Dir()
		for range 3 {
			if tk := next(); tk.err != nil || tk.info != (CompactionInfo{}) {
				t.Fatalf("%s: a tick did %+v, %v; want nothing", what, tk.info, tk.err)
			}
		}
		if r.Dir() != dir || len(reports) > 0 {
			t.Fatalf("%s: compacted (serving %s, was %s)", what, r.Dir(), dir)
		}
	}
	idle("no deletion")

	publishConsumers(t, js, 0, 1, 2) // an upsert is no deletion
	waitCaughtUp(t, r, 51)
	idle("an upsert")

	del := publishOne(t, js, 3, events.ConsumerDeleted{ConsumerID: consumerID(1)})
	var got CompactionInfo
	select {
	case got = <-reports:
	case <-time.After(60 * time.Second):
		t.Fatal("no compaction reported within 60s of a deletion")
	}
	if got.Position < del {
		t.Errorf("reported %+v, want a position >= %d", got, del)
	}
	if c, err := r.Compacted(); err != nil || c != got {
		t.Errorf("Compacted = %+v, %v; want the reported %+v", c, err, got)
	}
	for len(ticks) > 0 { // the ticks before the report
		<-ticks
	}
	idle("after the compaction")
	if logs.String() != "" {
		t.Errorf("CompactEvery logged:\n%s", logs)
	}
}
