package crash_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/crash"
)

// TestGuardFlushesThenPanics runs a child process (this test binary) whose
// goroutine panics under Guard after writing a line into a buffer that only
// the registered flush writes out: the line must reach stderr before the
// panic's own report, and the process must still die of the panic.
func TestGuardFlushesThenPanics(t *testing.T) {
	if os.Getenv("CRASH_TEST_CHILD") == "1" {
		var buf bytes.Buffer
		crash.OnPanic(func() { os.Stderr.Write(buf.Bytes()) })
		buf.WriteString("the last log line\n")
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer crash.Guard()
			panic("boom in a background task")
		}()
		<-done
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGuardFlushesThenPanics$") //nolint:gosec // G204: this test binary
	cmd.Env = append(os.Environ(), "CRASH_TEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child exited 0; want it to die of its panic. Output:\n%s", out)
	}
	text := string(out)
	line, panicAt := strings.Index(text, "the last log line"), strings.Index(text, "panic: boom in a background task")
	if line < 0 || panicAt < 0 || line > panicAt {
		t.Fatalf("want the flushed line before the panic report; got:\n%s", text)
	}
	if !strings.Contains(text, "TestGuardFlushesThenPanics.func") {
		t.Errorf("the panic's stack does not name the goroutine that panicked:\n%s", text)
	}
}

func TestGuardWithoutPanicDoesNothing(t *testing.T) {
	called := false
	remove := crash.OnPanic(func() { called = true })
	defer remove()
	func() { defer crash.Guard() }()
	if called {
		t.Error("the flush ran without a panic")
	}
	remove()
	crash.Flush()
	if called {
		t.Error("an unregistered flush ran")
	}
}
