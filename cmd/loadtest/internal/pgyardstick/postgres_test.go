package pgyardstick

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// pgRows are n synthetic rows: random ids and bodies of a few hundred
// bytes, each with a NUL and a byte that is not UTF-8, which the
// yardstick must answer unchanged.
type pgRows struct {
	ids    []string
	bodies [][]byte
}

func newPGRows(n int) pgRows {
	r := pgRows{}
	for i := range n {
		r.ids = append(r.ids, uuid.NewString())
		b := fmt.Appendf(nil, `{"person_id":%q,"name":"Person %d","pad":"%0300d","raw":"`, r.ids[i], i, i)
		r.bodies = append(r.bodies, append(b, 0x00, 0xff, '"', '}'))
	}
	return r
}

func (r pgRows) seq() iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		for i, id := range r.ids {
			if !yield(id, r.bodies[i]) {
				return
			}
		}
	}
}

// pgTestDir returns a new directory the user postgres can reach (a test's
// TempDir is under a directory only its owner can search).
func pgTestDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgyardstick")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { //nolint:gosec // G302: the user postgres must search it
		t.Fatal(err)
	}
	return dir
}

// startPG starts the yardstick or skips the test when PostgreSQL is not
// installed.
func startPG(t *testing.T, ctx context.Context, dir string, rows iter.Seq2[string, []byte]) *PGYardstick {
	t.Helper()
	y, err := StartPostgres(ctx, dir, rows)
	if errors.Is(err, ErrNoPostgres) {
		t.Skipf("the PostgreSQL yardstick needs PostgreSQL's server binaries: %v", err)
	}
	if err != nil {
		t.Fatalf("StartPostgres: %v", err)
	}
	t.Cleanup(func() { _ = y.Close() })
	return y
}

func TestPostgresYardstick(t *testing.T) {
	rows := newPGRows(300)
	dir := pgTestDir(t)
	y := startPG(t, t.Context(), dir, rows.seq())
	if !y.Loaded {
		t.Errorf("first start: Loaded = false, want the rows copied in")
	}
	c := &http.Client{Timeout: 10 * time.Second}

	for _, i := range []int{0, 1, 150, 299} {
		t.Run("person "+strconv.Itoa(i)+" answers its bytes", func(t *testing.T) {
			got, err := loadtest.Get(c, y.URL+"/api/v1/persons/"+rows.ids[i], "")
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Body) != string(rows.bodies[i]) {
				t.Errorf("body = %d bytes, want the %d bytes loaded", len(got.Body), len(rows.bodies[i]))
			}
			if ct := got.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
		})
	}
	for name, id := range map[string]string{"unknown id": uuid.NewString(), "not a UUID": "p1"} {
		t.Run(name+" is 404", func(t *testing.T) {
			res, err := c.Get(y.URL + "/api/v1/persons/" + id)
			if err != nil {
				t.Fatal(err)
			}
			_ = res.Body.Close()
			if res.StatusCode != http.StatusNotFound {
				t.Errorf("status = %d, want 404", res.StatusCode)
			}
		})
	}

	t.Run("Close stops postgres", func(t *testing.T) {
		addr := "127.0.0.1:" + strconv.Itoa(y.pm.port)
		if err := y.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			t.Errorf("postgres's port %s still accepts after Close", addr)
		}
		if err := y.Close(); err != nil {
			t.Errorf("second Close: %v, want nil", err)
		}
	})

	t.Run("a second start on the same rows reuses them", func(t *testing.T) {
		y2 := startPG(t, t.Context(), dir, rows.seq())
		if y2.Loaded {
			t.Errorf("Loaded = true, want the rows there reused")
		}
		got, err := loadtest.Get(c, y2.URL+"/api/v1/persons/"+rows.ids[7], "")
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Body) != string(rows.bodies[7]) {
			t.Errorf("body = %d bytes, want the %d bytes loaded", len(got.Body), len(rows.bodies[7]))
		}
	})

	t.Run("other rows are copied in over the old", func(t *testing.T) {
		other := newPGRows(20)
		y3 := startPG(t, t.Context(), dir, other.seq())
		if !y3.Loaded {
			t.Errorf("Loaded = false, want the new rows copied in")
		}
		res, err := c.Get(y3.URL + "/api/v1/persons/" + rows.ids[0])
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("an old row's status = %d, want 404", res.StatusCode)
		}
	})
}

func TestPostgresStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	y := startPG(t, ctx, pgTestDir(t), newPGRows(3).seq())
	cancel()
	testkit.WaitFor(t, time.Minute, func() error {
		select {
		case <-y.pm.exited:
			return nil
		default:
			return errors.New("postgres still running after its context ended")
		}
	})
}

func TestPrepareDirRefusesADirectoryPostgresCannotReach(t *testing.T) {
	hidden := filepath.Join(t.TempDir(), "private")
	if err := os.Mkdir(hidden, 0o700); err != nil {
		t.Fatal(err)
	}
	cred := &syscall.Credential{Uid: uint32(os.Geteuid()) + 1, Gid: uint32(os.Getegid()) + 1} //nolint:gosec // G115: small ids
	err := prepareDir(filepath.Join(hidden, "pg"), cred)
	if err == nil || !strings.Contains(err.Error(), hidden+" is not searchable") {
		t.Errorf("prepareDir = %v, want an error naming %s", err, hidden)
	}
}

func TestSharedBuffersHoldTheRows(t *testing.T) {
	tests := []struct {
		name        string
		rows, bytes int64
	}{
		{"none", 0, 0},
		{"1M people of 400 bytes", 1_000_000, 400_000_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sharedBuffersFor(tt.rows, tt.bytes)
			if least := tt.bytes + 100*tt.rows + 128<<20; got < least {
				t.Errorf("sharedBuffersFor = %d, want at least %d", got, least)
			}
		})
	}
}
