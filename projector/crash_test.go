package projector

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Environment of the crash child (see TestMain).
const (
	envChild     = "PROJECTOR_CRASH_CHILD" // "1": run as the child
	envChildURL  = "PROJECTOR_CRASH_NATS_URL"
	envChildDir  = "PROJECTOR_CRASH_STORE_DIR"
	envChildSize = "PROJECTOR_CRASH_BATCH"
)

func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "1" {
		os.Exit(crashChild())
	}
	os.Exit(m.Run())
}

// crashChild projects the stream into the store until it is killed,
// printing "cp <seq>" after each committed batch.
func crashChild() int {
	batch, _ := strconv.Atoi(os.Getenv(envChildSize))
	s, err := Open(os.Getenv(envChildDir), StoreOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	nc, err := nats.Connect(os.Getenv(envChildURL))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	p := newProjector(js, s, Config{BatchSize: batch}, withAfterCommit(func(seq uint64) { fmt.Fprintf(os.Stdout, "cp %d\n", seq) }))
	err = p.Run(context.Background())
	fmt.Fprintln(os.Stderr, "child: Run returned:", err)
	return 3
}

// TestCrashSafety SIGKILLs a child process projecting a stream of tens of
// thousands of events at random points, restarts it each time, and compares
// the final read model with the reference model, entity by entity.
func TestCrashSafety(t *testing.T) {
	const n, kills = 30_000, 12
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))

	srv := startServer(t, t.TempDir(), -1)
	js := connect(t, srv.ClientURL())
	createStream(t, js)
	msgs := genStream(t, rng, n)
	publishAll(t, js, msgs)
	last := streamLastSeq(t, js)
	dir := t.TempDir()

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Kill points: increasing random checkpoints, each followed by a random
	// extra delay so that the kill lands anywhere in the next batch (decode,
	// DLQ publish, Badger commit).
	targets := make([]uint64, kills)
	for i := range targets {
		lo := last * uint64(i) / kills
		targets[i] = lo + 1 + rng.Uint64N(last/kills)
	}
	for i, target := range targets {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), envChild+"=1", envChildURL+"="+srv.ClientURL(), envChildDir+"="+dir,
			envChildSize+"="+strconv.Itoa(20+rng.IntN(500)))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// A watchdog, so that a child that hangs fails the test instead of
		// blocking it.
		watchdog := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
		sc := bufio.NewScanner(out)
		var cp uint64
		for cp < target && sc.Scan() {
			cp, _ = strconv.ParseUint(strings.TrimPrefix(sc.Text(), "cp "), 10, 64)
		}
		watchdog.Stop()
		if cp < target {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("kill %d: child stopped at checkpoint %d before %d: %s", i, cp, target, stderr.String())
		}
		time.Sleep(time.Duration(rng.IntN(5000)) * time.Microsecond) // random kill point, not a wait for a condition
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		werr := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("kill %d: child did not die of SIGKILL: %v: %s", i, werr, stderr.String())
		}
	}

	// Finish in-process and compare.
	s := openStore(t, dir, StoreOptions{})
	cp, err := s.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if cp < targets[len(targets)-1] {
		t.Fatalf("checkpoint %d after the kills, below the last kill target %d", cp, targets[len(targets)-1])
	}
	p := New(js, s, Config{})
	runProjector(t, p)
	waitApplied(t, p, last, 60*time.Second)
	want, _, _, dead := reference(msgs)
	compareState(t, dump(t, s), want)

	// Every invalid event is in the DLQ exactly once, crashes notwithstanding.
	dlq, err := js.Stream(t.Context(), "PERSONS_DLQ")
	if err != nil {
		t.Fatal(err)
	}
	if got := dlq.CachedInfo().State.Msgs; got != uint64(dead) {
		t.Errorf("DLQ holds %d messages, want %d", got, dead)
	}
}
