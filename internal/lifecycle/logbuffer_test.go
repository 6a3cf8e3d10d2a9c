package lifecycle

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestBufferedLogger checks when the buffered log reaches its writer: an
// INFO line within the flush interval, a WARN line at once with the lines
// before it, and every line when the command returns; and that only a file
// is written through a buffer.
func TestBufferedLogger(t *testing.T) {
	newLogger := func(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }
	t.Run("a file is buffered, another writer is not", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "log"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			logger, stop := NewLog(f, newLogger)
			logger.Info("held")
			// The bubble's clock stands still until every goroutine in it is
			// blocked: no tick can have written the line out yet.
			synctest.Wait()
			if b, err := os.ReadFile(f.Name()); err != nil || len(b) != 0 {
				t.Errorf("the file holds %q (%v) right after an INFO line, want nothing yet", b, err)
			}
			stop()
			if b, err := os.ReadFile(f.Name()); err != nil || !strings.Contains(string(b), `"msg":"held"`) {
				t.Errorf("after stop the file holds %q (%v), want the INFO line", b, err)
			}
		})
		out := new(testkit.LogBuffer)
		logger, stop := NewLog(out, newLogger)
		defer stop()
		logger.Info("direct")
		if !strings.Contains(out.String(), `"msg":"direct"`) {
			t.Errorf("a testkit.Buffer holds %q right after an INFO line, want it", out.String())
		}
	})
	t.Run("warn flushes at once, in order", func(t *testing.T) {
		out := new(testkit.LogBuffer)
		logger, stop := BufferedLog(out, newLogger)
		defer stop()
		logger.Info("first")
		logger.With("component", "api").Warn("second")
		got := out.String()
		first, second := strings.Index(got, `"msg":"first"`), strings.Index(got, `"msg":"second"`)
		if first < 0 || second < first || !strings.Contains(got, `"component":"api"`) {
			t.Fatalf("right after a WARN line the writer holds %q, want the INFO line then the WARN line", got)
		}
	})
	t.Run("info within the flush interval", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			out := new(testkit.LogBuffer)
			logger, stop := BufferedLog(out, newLogger)
			defer stop()
			logger.Info("held")
			time.Sleep(LogFlushInterval - time.Nanosecond)
			synctest.Wait()
			if strings.Contains(out.String(), `"msg":"held"`) {
				t.Fatalf("the INFO line written %v after it was logged, before the flush interval", LogFlushInterval-time.Nanosecond)
			}
			time.Sleep(time.Nanosecond)
			synctest.Wait()
			if !strings.Contains(out.String(), `"msg":"held"`) {
				t.Fatalf("the INFO line not written a flush interval (%v) after it was logged", LogFlushInterval)
			}
		})
	})
	t.Run("WriteOut writes what is held", func(t *testing.T) {
		out := new(testkit.LogBuffer)
		logger, stop := BufferedLog(out, newLogger)
		defer stop()
		logger.With("component", "api").Info("before the banner")
		WriteLogOut(logger)
		if !strings.Contains(out.String(), `"msg":"before the banner"`) {
			t.Fatalf("after writeLogOut the writer holds %q, want the INFO line", out.String())
		}
	})
	t.Run("stop writes what is held", func(t *testing.T) {
		out := new(testkit.LogBuffer)
		logger, stop := BufferedLog(out, newLogger)
		logger.Info("last words")
		stop()
		if !strings.Contains(out.String(), `"msg":"last words"`) {
			t.Fatalf("after stop the writer holds %q, want the INFO line", out.String())
		}
	})
}
