package replica

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

// Environment of the crash child (see TestMain).
const (
	envChild    = "REPLICA_CRASH_CHILD" // the child's mode: snapshot, restore, rebuild, swap, compact or compact-swap
	envChildURL = "REPLICA_CRASH_NATS_URL"
	envChildDir = "REPLICA_CRASH_ROOT"
	crashBucket = "CRASH_SNAPSHOTS"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		os.Exit(crashChild(mode))
	}
	os.Exit(m.Run())
}

// crashChild runs a replica of the root directory in the mode given, until
// it is killed, printing what it is doing:
//
//	snapshot  writes snapshots one after the other ("snapshot" before each)
//	restore   bootstraps from the bucket, then waits
//	rebuild   starts a rebuild once caught up ("rebuilding")
//	swap      the same, and kills itself right after activating the new model
//	compact   compacts one compaction after the other ("compacting" before each)
//	compact-swap  compacts, and kills itself right after activating the copy
func crashChild(mode string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "child:", err); return 2 }
	nc, err := nats.Connect(os.Getenv(envChildURL))
	if err != nil {
		return fail(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fail(err)
	}
	sn, err := projector.NewSnapshots(js, projector.SnapshotsConfig{Bucket: crashBucket, Keep: 2})
	if err != nil {
		return fail(err)
	}
	r, err := Open(childConfig(js, os.Getenv(envChildDir), sn))
	if err != nil {
		return fail(err)
	}
	if mode == "swap" || mode == "compact-swap" {
		r.swapHook = func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	}
	go func() { fmt.Fprintln(os.Stderr, "child: Run:", r.Run(context.Background())) }()
	<-r.CaughtUp()
	fmt.Println("ready")
	switch mode {
	case "snapshot":
		for {
			fmt.Println("snapshot")
			if _, _, err := r.Snapshot(context.Background()); err != nil {
				return fail(err)
			}
		}
	case "rebuild", "swap":
		if err := r.Rebuild(); err != nil {
			return fail(err)
		}
		fmt.Println("rebuilding")
	case "compact", "compact-swap":
		for {
			fmt.Println("compacting")
			if _, err := r.Compact(context.Background()); err != nil {
				return fail(err)
			}
		}
	}
	select {}
}

func childConfig(js jetstream.JetStream, root string, sn *projector.Snapshots) Config {
	return Config{
		Root: root,
		NewProjector: func(s *projector.Store) *projector.Projector {
			return projector.New(js, s, projector.Config{Stream: "PERSONS"})
		},
		Stream: func(ctx context.Context) (projector.StreamIdentity, error) {
			return projector.LookUpStream(ctx, js, "PERSONS")
		},
		Snapshots: sn,
	}
}

// child is a crash child process.
type child struct {
	cmd   *exec.Cmd
	lines chan string
}

func startChild(t *testing.T, mode, url, root string) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$") //nolint:gosec // G204: the test binary itself
	cmd.Env = append(os.Environ(), envChild+"="+mode, envChildURL+"="+url, envChildDir+"="+root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, lines: make(chan string, 1<<16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return c
}

// await waits for the child to print line.
func (c *child) await(t *testing.T, line string) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				t.Fatalf("child ended before printing %q", line)
			}
			if l == line {
				return
			}
		case <-timeout:
			t.Fatalf("child did not print %q within 60s", line)
		}
	}
}

// kill SIGKILLs the child and waits for it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()
}

// newModelUnderWay reports whether root holds a model directory that
// ACTIVE does not name (a restore or rebuild under way).
func newModelUnderWay(root string) bool {
	active, _ := ActiveDir(root)
	dirs, _ := filepath.Glob(filepath.Join(root, "model-*"))
	for _, d := range dirs {
		if d != active {
			return true
		}
	}
	return false
}

// awaitTight polls cond every millisecond (a restore is short) for up to
// a minute.
func awaitTight(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s seen within a minute", what)
		}
	}
}

// TestCrashConverges SIGKILLs a replica during a snapshot upload, a
// restore, a rebuild and the swap, and checks that the next start
// converges on the right model, with nothing left beside it.
func TestCrashConverges(t *testing.T) {
	if testing.Short() {
		t.Skip("crash tests start child processes")
	}
	ns := testkit.RunNATS(t, nil)
	_, js := testkit.ConnectNATS(t, ns.ClientURL())
	testkit.PersonsStream(t, js)
	const n = 20000
	publishConsumers(t, js, 0, n, 1)

	// seed holds a model and a snapshot of it, for the restore case.
	seed := t.TempDir()
	c := startChild(t, "snapshot", ns.ClientURL(), seed)
	c.await(t, "snapshot")
	c.await(t, "snapshot") // one whole snapshot stored
	c.kill(t)
	converges(t, js, seed, "snapshot upload", n)

	for _, tc := range []struct {
		mode  string
		root  func(t *testing.T) string
		until func(t *testing.T, c *child, root string)
	}{
		{"restore", func(t *testing.T) string { return t.TempDir() }, func(t *testing.T, _ *child, root string) {
			awaitTight(t, "restore", func() bool { return newModelUnderWay(root) })
		}},
		{"rebuild", copyOf(seed), func(t *testing.T, c *child, root string) {
			c.await(t, "rebuilding")
			awaitTight(t, "rebuild", func() bool { return newModelUnderWay(root) })
		}},
		{"swap", copyOf(seed), func(t *testing.T, c *child, _ string) {
			c.await(t, "rebuilding")
			if err := c.cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
				t.Fatalf("child: %v, want killed by its swap hook", err)
			}
		}},
		{"compact", copyOf(seed), func(t *testing.T, c *child, root string) {
			c.await(t, "compacting")
			awaitTight(t, "compaction", func() bool { return newModelUnderWay(root) })
		}},
		{"compact-swap", copyOf(seed), func(t *testing.T, c *child, root string) {
			c.await(t, "compacting")
			if err := c.cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
				t.Fatalf("child: %v, want killed by its swap hook", err)
			}
			// Killed after the copy's activation, before the old model's
			// deletion: no compaction may be recorded.
			if info, err := readCompaction(root); err != nil || info != (CompactionInfo{}) {
				t.Errorf("compaction recorded before the old model was deleted: %+v, %v", info, err)
			}
		}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			root := tc.root(t)
			c := startChild(t, tc.mode, ns.ClientURL(), root)
			tc.until(t, c, root)
			c.kill(t)
			converges(t, js, root, "a kill during "+tc.mode, n)
		})
	}
}

// copyOf returns a function copying the data directory src to a new one.
func copyOf(src string) func(t *testing.T) string {
	return func(t *testing.T) string {
		t.Helper()
		dst := t.TempDir()
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		return dst
	}
}

// converges opens root after a crash, checks that only its active model is
// left, runs it to the end of the stream and checks every consumer.
func converges(t *testing.T, js jetstream.JetStream, root, after string, n int) {
	t.Helper()
	sn, err := projector.NewSnapshots(js, projector.SnapshotsConfig{Bucket: crashBucket})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(childConfig(js, root, sn))
	if err != nil {
		t.Fatalf("open after %s: %v", after, err)
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "model-*"))
	active, _ := ActiveDir(root)
	for _, d := range dirs {
		if d != active {
			t.Errorf("after %s, %s is left beside the active model %s", after, d, active)
		}
	}
	if active != root {
		if leftovers, _ := filepath.Glob(filepath.Join(root, "*.sst")); len(leftovers) > 0 {
			t.Errorf("after %s, store files are left in the data dir beside the active %s", after, active)
		}
	}
	stop := run(t, r)
	waitCaughtUp(t, r, uint64(n))
	checkNames(t, r, n, "v1")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("converged after %s (model %s)", after, filepath.Base(active))
}
